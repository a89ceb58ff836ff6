"""Click commands that live in their own module (one command each), registered in ontolink.cli.

Each module defines one ``click.Command`` named ``command``: thin option
parsing that calls a function in ``ontolink.steps``. Heavy imports happen inside
the command function, so ``ontolink --help`` stays fast.
"""
