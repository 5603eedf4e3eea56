//! The MCP protocol client (to be written).
