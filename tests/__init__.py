"""designlab's tests (a regular package, so a `tests` package some dependency installs, such as
Ciw's, never shadows it in a server subprocess started with a factory under tests/)."""
