"""The `ontolink` command line: the click group (main), shared options, man pages, and one thin module per command under commands/."""
