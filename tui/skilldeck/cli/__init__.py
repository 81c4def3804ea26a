"""The ``skilldeck`` command line, thin over the core."""
