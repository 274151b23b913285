# The package's public names, for type checkers: `__version__` is computed by the module's `__getattr__`, which
# would otherwise make every misspelt attribute of `theurian` type-check as a str.
PROTOCOL_VERSION: str
__version__: str
