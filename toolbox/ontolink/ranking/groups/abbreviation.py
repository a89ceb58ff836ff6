"""abbreviation: the candidate was found through the long form of a short form defined in the document (the
long form is searched too, by CandidateFeatures; each candidate keeps the better of its two scores)."""

from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup


@FEATURE_GROUPS.register("abbreviation")
class FoundByLongForm(FeatureGroup):
    columns = ("expanded",)
    default = True
    searches_long_forms = True
    position = 30

    def candidate_columns(self, found):
        return [found.by_long_form]
