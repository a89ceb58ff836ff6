"""A learned candidate ranker (`ontolink train ranker`, `link --ranker`): cheap features of each retrieved
candidate that the frozen encoder does not use, combined by a logistic regression fitted without gold labels.

groups/ holds the feature groups, one module each in a registry; features.py retrieves the candidates and lays
the groups' columns side by side; priors.py reads entity priors, abbreviations.py expands short forms from the
mention's document, queries.py makes the training queries, fit.py fits the model (ranking/train.py saves
it, ontolink.ranking.ranker loads and applies it).
"""

# candidates a ranker fitted by `train ranker` orders, and those it computes features for unless told otherwise
# (the index's default ranker orders plain `link`'s 10: ontolink.ranking.default.DEPTH)
FITTING_DEPTH = 64
# --prior's default: the entity prior of the index's ontology, if one is known (ranker.resolve_prior)
AUTO_PRIOR = "auto"
