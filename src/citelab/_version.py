"""citelab's version, in a module of its own: the transports name it (in their OpenAPI and MCP
server information) without importing the package's namespace, which lists every public name
of every subpackage."""

__all__ = ["__version__"]

__version__ = "0.1.0"
