"""Click commands that live in their own module (one command each), registered in ontolink.cli.main.

Each module defines one ``click.Command`` named ``command``: thin option
parsing that calls a function of a task folder (``ontolink.linking``, ``ontolink.indexes``, ...). Heavy imports happen inside
the command function, so ``ontolink --help`` stays fast.
"""
