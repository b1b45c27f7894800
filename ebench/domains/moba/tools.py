from ..engine.tools import ToolRegistry
TOOLS = ToolRegistry("moba")
