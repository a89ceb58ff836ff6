"""The version of ontolink: what manifests record and `ontolink --version` prints."""

__version__ = "0.1.0"
