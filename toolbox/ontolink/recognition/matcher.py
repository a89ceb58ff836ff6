"""An order-free name matcher: a name is found when its content words all occur, in any order and
in any word form, close together inside one clause of the text.

"Absent speech" is found in "absence of speech", "Kidney malformation" in "malformations of the
kidneys". Each name becomes the set of its content-word keys (``WordForms``: function words
dropped, word forms joined; a name of one content word keeps that word, lightly folded: ``wordforms.fold``,
"sinus" is no form of "sinusitis"); the text is keyed the same way and cut into clauses at sentence
punctuation, commas and brackets. A name matches where a window of the clause holds all of its
keys, with at most ``max_gaps`` other content words inside and no "and"/"or" unless the name has
one (coordinations are expanded by ``recognition.coordination``). Overlapping matches: the one
covering more words wins, then the one matching more name words (the more specific name), then
a name in the text's own word order.
"""

from bisect import bisect_left
from collections import Counter, defaultdict

from ontolink.core.gc_pause import collection_paused
from ontolink.recognition.abbreviations import DocumentAbbreviations
from ontolink.recognition.coordination import coordinated_matches
from ontolink.recognition.equivalents import MIN_ENTITIES, equivalent_keys, learned_pairs, pertainym_pairs, \
    variant_names
from ontolink.recognition.match import Match
from ontolink.recognition.wordforms import CONJUNCTIONS, WordForms, fold, tokens
from ontolink.core.cache import cache_dir, write_atomically
from ontolink.core.manifest import json_sha256
from ontolink.recognition.options import AnnotateOptions

# Key prefix of a one-word name: matched on the light fold of the word (``wordforms.fold``), not its
# word-form cluster.
WHOLE_WORD = "="

# Characters that close a clause: a name is never matched across them (unless it holds one itself).
CLAUSE_BREAKS = frozenset(".;:!?()[]{},")
NESTING_RULES = ("none", "all", "ancestor")
SHARED_NAMES = ("general", "all")  # a name of an entity and of its ancestor: the ancestor only, or both
# Words whose keys a matcher remembers (a long corpus brings ever new words: memory stays bounded).
MAX_WORDS_KEPT = 1_000_000
# Bumped whenever keying changes: tables cached by an older version are built again.
CACHE_VERSION = 8
# How the cached tables are laid out (``NameTable``): another layout is another cache file, whatever the version.
TABLE_LAYOUT = "names by anchor"


class ConceptMatcher:
    """Names of an ontology's entities (under ``roots``, and among ``subset`` when given: a set of ids)
    keyed for order-free matching.

    The keyed tables are kept in the user cache (``cache``), tied to the ontology's content and these
    options, so the next run over the same ontology loads them instead of keying every name again.
    """

    def __init__(self, ontology, roots=None, min_characters=AnnotateOptions.min_chars,
                 max_gaps=AnnotateOptions.max_gaps, word_forms=AnnotateOptions.word_forms,
                 any_order=AnnotateOptions.any_order, optional_modifiers=AnnotateOptions.optional_modifiers,
                 min_modifier_entities=25, cache=True, shared_names=AnnotateOptions.shared_names,
                 equivalents=AnnotateOptions.equivalent_words, pertainyms=None, extra_names=None, subset=None):
        self.ontology = ontology
        self.max_gaps = max_gaps
        self.any_order = any_order
        keep = descendants(ontology, roots) if roots else None
        if subset is not None:  # `annotate --entities / --where`: on top of the roots
            keep = set(subset) if keep is None else keep & set(subset)
        self.allowed = keep  # the entity ids looked for (None: all)
        settings = {"version": CACHE_VERSION, "layout": TABLE_LAYOUT, "ontology": ontology.content_hash,
                    "scopes": list(ontology.synonym_scopes), "roots": sorted(roots) if roots else None,
                    "min_characters": min_characters, "word_forms": word_forms,
                    "optional_modifiers": optional_modifiers, "min_modifier_entities": min_modifier_entities,
                    "equivalents": MIN_ENTITIES if equivalents else None,
                    "pertainyms": _fingerprint(pertainyms) if pertainyms else None,
                    "extra_names": _fingerprint(extra_names) if extra_names else None}
        if subset is not None:  # only then: the tables cached without one keep their key
            settings["subset"] = _fingerprint(sorted(subset))
        if getattr(ontology, "fields", None):  # another --field mapping of the same file is other names
            settings["fields"] = dict(sorted(ontology.fields.items()))
        with collection_paused():  # tens of thousands of small lists: see gc_pause
            self._load_or_build(settings, cache, ontology, keep, min_characters, word_forms, optional_modifiers,
                                min_modifier_entities, equivalents, pertainyms, extra_names)
        self.size = len(self.entries) - self.variants  # the ontology's own names (once keyed)
        self._ancestors = {}
        self._abbreviations = None
        self._word_keys = {}  # word -> (key, lowercase, whole-word key): the text side's per-word work, once
        if shared_names == "general":
            self.entries.choose_ids = self._general_ids

    def _load_or_build(self, settings, cache, ontology, keep, min_characters, word_forms, optional_modifiers,
                       min_modifier_entities, equivalents, pertainyms, extra_names):
        cached = _cached_tables(settings) if cache else None
        if cached is not None:
            self.forms = WordForms(clusters=False)
            self.forms.cluster_of = cached["clusters"]
            self.modifiers = set(cached["modifiers"])
            self.variants = cached["variants"]
            self.entries = NameTable(cached["names"])
        else:
            self._build(ontology, keep, min_characters, word_forms, optional_modifiers, min_modifier_entities,
                        equivalents, pertainyms, extra_names)
            self.entries = NameTable.from_entries(self.entries)
            if cache:
                _store_tables(settings, {"clusters": self.forms.cluster_of, "modifiers": sorted(self.modifiers),
                                         "variants": self.variants, "names": self.entries.stored})

    def _general_ids(self, ids):
        """A name shared by an entity and one of its ancestors names the ancestor only.

        HPO gives "ear anomalies" to *Abnormality of the ear* and to its child *Abnormality of the outer
        ear*: the words say no more than the general entity, so a text using them is not taken to mean
        the specific one. Entities of a shared name that are not related keep all their ids (`link`
        chooses among them). Applied to a group of names when the table makes it (``NameTable``).
        """
        if len(ids) > 1:
            general = [entity for entity in ids
                       if not any(other != entity and other in self.ancestors(entity) for other in ids)]
            if len(general) < len(ids):
                return general
        return ids

    def _build(self, ontology, keep, min_characters, word_forms, optional_modifiers, min_modifier_entities,
               equivalents=True, pertainyms=None, extra_names=None):
        def name_words(names):
            return [[word for word, _, _ in tokens(name)] for name in names if len(name.strip()) >= min_characters]

        own_words = {entity.id: name_words(ontology.names(entity)) for entity in ontology}
        self.forms = WordForms(list(own_words.values()), clusters=word_forms)  # learned from the ontology's names
        self.entries = {}  # frozenset of keys -> [ids, set of key orders, has a conjunction]
        self.variants = 0  # of which names with an equivalent word (``_add_equivalent_names``)
        for entity_id, names in own_words.items():
            if keep is None or entity_id in keep:
                for words in names:
                    self._add_name(entity_id, words)
        words_of = own_words
        if extra_names:  # ``recognition.extra_names``: looked for as the entity's own names are
            # but never under a key the ontology gives a name of any entity, inside the roots or outside them: an
            # alias "visual impairment" on Abnormality of vision would otherwise take Visual impairment's own name
            taken = {frozenset(keys) for names in own_words.values() for keys in map(self._name_keys, names) if keys}
            words_of = dict(own_words)
            for entity_id, names in extra_names.items():
                aliases = [words for words in name_words(names) if frozenset(self._name_keys(words) or ()) not in taken]
                words_of[entity_id] = own_words[entity_id] + aliases
                if keep is None or entity_id in keep:
                    for words in aliases:
                        self._add_name(entity_id, words)
        if equivalents or pertainyms:
            self._add_equivalent_names(ontology, words_of, keep, equivalents, pertainyms)
        self.modifiers = set()
        if optional_modifiers:  # learned from, and applied to, the ontology's own names only
            self._add_without_modifiers(ontology, own_words, keep, min_modifier_entities)

    def _name_keys(self, words):
        """The keys a name is looked up by (its content words' keys; a one-word name's folded word), or None."""
        content = [word for word in words if self.forms.key(word) is not None]
        if not content:
            return None
        return (WHOLE_WORD + fold(content[0]),) if len(content) == 1 else tuple(map(self.forms.key, content))

    def _add_name(self, entity_id, words):
        keys = self._name_keys(words)
        if keys is None:
            return
        entry = self.entries.setdefault(frozenset(keys), [[], set(), False])
        if entity_id not in entry[0]:
            entry[0].append(entity_id)
        entry[1].add(keys)
        entry[2] = entry[2] or any(word.lower() in CONJUNCTIONS for word in words)

    def _add_equivalent_names(self, ontology, words_of, keep, learned, pertainyms):
        """Names with one word replaced by an equivalent (``recognition.equivalents``): learned from the
        ontology's own synonyms (``learned``) and WordNet's pertainyms ({adjective: [nouns]})."""
        def keyed(names):
            sets = []
            for words in names:
                key_set = frozenset(key for key in map(self.forms.key, words) if key is not None)
                if key_set and key_set not in sets:
                    sets.append(key_set)
            return sets

        key_sets = {entity_id: keyed(names) for entity_id, names in words_of.items()}
        pairs = set()
        if learned:
            exact = [keyed([[word for word, _, _ in tokens(name)] for name, kind in ontology.named(entity)
                            if kind in ("name", "EXACT")]) for entity in ontology]
            pairs = learned_pairs(exact)
        if pertainyms:
            pairs |= pertainym_pairs(pertainyms, self.forms.key)
        # in the ontology's order (``keep`` is a set, whose order the hash seed changes): a variant's ids keep it
        wanted = key_sets if keep is None else {entity_id: sets for entity_id, sets in key_sets.items()
                                                 if entity_id in keep}
        # no variant takes a name of any entity's own, inside the roots or outside them (a text using it means that one)
        own = set(self.entries).union(*key_sets.values())
        variants = variant_names(wanted, equivalent_keys(pairs), own)
        for key_set, ids in variants.items():
            self.entries[key_set] = [ids, set(), False]  # no word order of its own: never "in order"
        self.variants = len(variants)

    def _add_without_modifiers(self, ontology, words_of, keep, min_entities):
        """Names less their optional modifiers, where no other name has those words.

        A modifier is learned from the ontology: a word that, added to a parent's name, makes the
        child's name in at least ``min_entities`` entities ("Congenital" + "vertical talus",
        "Localized" + "skin lesion"). "vertical talus" in a text then finds *Congenital vertical
        talus* when no entity is named "vertical talus" itself.
        """
        key_sets = {entity_id: [frozenset(key for key in map(self.forms.key, words) if key is not None)
                                for words in names] for entity_id, names in words_of.items()}
        counts = Counter()
        for entity_id, sets in key_sets.items():
            parent_sets = {key_set for parent in ontology[entity_id].parents for key_set in key_sets.get(parent, ())}
            added = {next(iter(key_set - parent)) for key_set in sets for parent in parent_sets
                     if len(key_set) == len(parent) + 1 and parent < key_set}
            counts.update(added)
        self.modifiers = {key for key, count in counts.items() if count >= min_entities}
        reduced = {}
        for entity_id, sets in key_sets.items():
            if keep is not None and entity_id not in keep:
                continue
            for key_set in sets:
                rest = key_set - self.modifiers
                if len(rest) >= 2 and rest != key_set and rest not in self.entries:
                    ids = reduced.setdefault(rest, [])
                    if entity_id not in ids:
                        ids.append(entity_id)
        for rest, ids in reduced.items():
            self.entries[rest] = [ids, set(), False]

    # -- text side ---------------------------------------------------------------------------------
    def keyed_tokens(self, text):
        """[(key or None, start, end, lowercase word, clause number, whole-word key)] of ``text``."""
        result = []
        clause = 0
        previous_end = 0
        word_keys = self._word_keys
        for word, start, end in tokens(text):
            if not CLAUSE_BREAKS.isdisjoint(text[previous_end:start]):
                clause += 1
            previous_end = end
            keys = word_keys.get(word)
            if keys is None:
                key = self.forms.key(word)
                keys = (key, word.lower(), None if key is None else WHOLE_WORD + fold(word))
                if len(word_keys) < MAX_WORDS_KEPT:  # bounded: a long corpus brings ever new words
                    word_keys[word] = keys
            result.append((keys[0], start, end, keys[1], clause, keys[2]))
        return result

    def candidates(self, keyed):
        """Every name match of each clause of ``keyed`` (``keyed_tokens``), overlapping ones included."""
        found = []
        begin = 0
        while begin < len(keyed):
            end = begin
            while end < len(keyed) and keyed[end][4] == keyed[begin][4]:
                end += 1
            found.extend(self._clause_candidates(keyed, begin, end))
            begin = end
        return found

    def _clause_candidates(self, keyed, begin, end):
        positions = defaultdict(list)
        for index in range(begin, end):
            if keyed[index][0] is not None:
                positions[keyed[index][0]].append(index)
                positions[keyed[index][5]].append(index)
        found = []
        present = positions.keys()
        bucket = self.entries.bucket
        for anchor in list(positions):
            for key_set, (ids, orders, has_conjunction) in bucket(anchor).items():
                if not present >= key_set:
                    continue
                for anchor_at in positions[anchor]:
                    chosen = {anchor: anchor_at}
                    for key in key_set:
                        if key != anchor:
                            chosen[key] = _nearest(positions[key], anchor_at)
                    first, last = min(chosen.values()), max(chosen.values())
                    match = self._window(keyed, first, last, key_set, chosen, ids, orders, has_conjunction)
                    if match is not None:
                        found.append(match)
        return found

    def _window(self, keyed, first, last, key_set, chosen, ids, orders, has_conjunction):
        gaps = 0
        for index in range(first, last + 1):
            key, word = keyed[index][0], keyed[index][3]
            if key is None:
                if word in CONJUNCTIONS and not has_conjunction:
                    return None
            elif key not in key_set and keyed[index][5] not in key_set:
                gaps += 1
        if gaps > self.max_gaps or last - first + 1 > 2 * len(key_set) + 2:
            return None
        order = tuple(key for key, _ in sorted(chosen.items(), key=lambda item: item[1]))
        in_order = order in orders or len(key_set) == 1
        if not in_order and not self.any_order:
            return None
        words = sum(1 for index in range(first, last + 1) if keyed[index][0] is not None)
        return Match(first, last, list(ids), len(key_set), in_order, words)

    # -- choosing ----------------------------------------------------------------------------------
    def matches(self, text, nesting="none", coordination=AnnotateOptions.coordination,
                abbreviations=AnnotateOptions.abbreviations):
        """(start, end, ids) of the names found in ``text``, in text order (see ``spans``)."""
        return [(start, end, ids) for start, end, ids, *_ in self.spans(text, nesting, coordination, abbreviations)]

    def spans(self, text, nesting="none", coordination=AnnotateOptions.coordination,
              abbreviations=AnnotateOptions.abbreviations):
        """(start, end, ids, source, expansion) of the names found in ``text``, in text order; source
        is "dictionary", "coordination" for a name expanded from a coordination (``expansion``: that
        name written out, "palmar pits"; its ids are empty when it is no name of the ontology), or
        "abbreviation" for a short form defined in ``text`` whose long form is a name (with
        ``abbreviations``; ``expansion``: the long form); expansion is None for "dictionary".

        Overlapping matches keep the best (see the module docstring). ``nesting`` says which
        names inside a kept one stay too: "none", "all", or "ancestor": those whose entity is the
        outer entity or one of its ancestors ("colitis" inside "ulcerative colitis" stays; the
        sibling-less "carcinoma" inside "basal cell carcinoma", which HPO files elsewhere, goes).
        """
        if not self.size:
            return []
        keyed = self.keyed_tokens(text)
        chosen, inner = self.choose(keyed, self.candidates(keyed), nesting)
        found = chosen + inner
        if coordination:
            spans = {(match.first, match.last) for match in found}
            found += [match for match in coordinated_matches(self, text, keyed, found)
                      if (match.first, match.last) not in spans]
        if abbreviations:
            if self._abbreviations is None:
                self._abbreviations = DocumentAbbreviations()
            taken = {index for match in found for index in range(match.first, match.last + 1)}
            found += self._abbreviations.matches(self, text, keyed, taken)
        return sorted(((keyed[match.first][1], keyed[match.last][2], match.ids, match.source, match.expansion)
                       for match in found), key=lambda span: span[:4] + (span[4] or "",))

    def choose(self, keyed, found, nesting="none"):
        """(outer matches, kept inner matches): greedy best-first without overlap, then nesting."""
        found = sorted(found, key=Match.rank)
        taken = [None] * len(keyed)
        chosen, inside = [], []
        for match in found:
            owners = {taken[index] for index in range(match.first, match.last + 1)}
            if owners == {None}:
                for index in range(match.first, match.last + 1):
                    taken[index] = len(chosen)
                chosen.append(match)
            elif None not in owners and len(owners) == 1:
                inside.append((owners.pop(), match))
        inner = []
        if nesting != "none":
            used = [False] * len(keyed)
            kept = set()
            # the kept inner matches of each outer one: a match around an inner one lies inside the same outer
            # match (outer ones do not overlap), so only those are looked at (all of the document's: quadratic)
            kept_inside = defaultdict(list)
            for outer_index, match in inside:
                outer = chosen[outer_index]
                if (match.first, match.last) in kept or (match.first, match.last) == (outer.first, outer.last):
                    continue
                if nesting == "ancestor":
                    # every ancestor's name inside stays, one inside another too: "schwannomas" in "vestibular
                    # schwannomas" in "bilateral vestibular schwannomas" (each the next one's ancestor)
                    if not self._generalises(match.ids, outer.ids):
                        continue
                    # ... but an entity a kept match around it gives already says nothing new ("developmental
                    # delay" inside "global developmental delay": both Global developmental delay)
                    if any(set(match.ids) <= set(around.ids) for around in [outer] + kept_inside[outer_index]
                           if around.first <= match.first and match.last <= around.last):
                        continue
                elif any(used[match.first:match.last + 1]):
                    continue
                used[match.first:match.last + 1] = [True] * (match.last - match.first + 1)
                kept.add((match.first, match.last))
                kept_inside[outer_index].append(match)
                inner.append(match)
        return chosen, inner

    def _generalises(self, inner_ids, outer_ids):
        """Whether an inner id is an outer id or one of its ancestors."""
        return any(inner in self.ancestors(outer) for outer in outer_ids for inner in inner_ids)

    def ancestors(self, entity_id):
        """``entity_id`` and all its ancestors (memoised)."""
        found = self._ancestors.get(entity_id)
        if found is None:
            found = {entity_id}
            frontier = [entity_id]
            while frontier:
                current = frontier.pop()
                entity = self.ontology.entities.get(current)
                for parent in entity.parents if entity else ():
                    if parent not in found:
                        found.add(parent)
                        frontier.append(parent)
            self._ancestors[entity_id] = found
        return found


class NameTable:
    """The keyed names: frozenset of keys -> [ids, set of key orders, has a conjunction], grouped by the
    name's anchor (its rarest key), which is where the text side looks them up.

    Loaded from the cache, a group is made into sets only when a text holds its anchor: a run over a few
    abstracts touches a small part of an ontology's names, and making all of them (tens of thousands of
    sets) cost more than the abstracts. Also kept, for coordinations: the numbers of the names holding each
    key, and how often each key occurs in a name's word orders and ends one.
    """

    def __init__(self, stored):
        self.stored = stored  # the JSON-ready form (see ``from_entries``)
        self._raw = stored["anchors"]
        self._frequency = stored["frequency"]
        self._groups = {}
        self._holding = {}
        self.choose_ids = None  # a function of a name's ids giving those it names (the matcher's --shared-names)
        self.occurrences, self.endings = stored["occurrences"], stored["endings"]

    @classmethod
    def from_entries(cls, entries):
        """The table of ``entries`` (a dict as described above, in the order names were keyed)."""
        frequency = Counter(key for key_set in entries for key in key_set)
        anchors, holding, occurrences, endings = {}, {}, {}, {}
        for number, (key_set, (ids, orders, conjunction)) in enumerate(entries.items()):
            anchor = min(key_set, key=lambda key: (frequency[key], key))
            anchors.setdefault(anchor, []).append([sorted(key_set), ids, sorted(orders), conjunction])
            for key in key_set:
                holding.setdefault(key, []).append(number)
            for order in orders:
                for key in order:
                    occurrences[key] = occurrences.get(key, 0) + 1
                endings[order[-1]] = endings.get(order[-1], 0) + 1
        return cls({"count": len(entries), "frequency": dict(frequency), "anchors": anchors, "holding": holding,
                    "occurrences": occurrences, "endings": endings})

    def __len__(self):
        return self.stored["count"]

    def bucket(self, anchor):
        """{key set: [ids, orders, has a conjunction]} of the names whose anchor is ``anchor``, in keying order."""
        group = self._groups.get(anchor)
        if group is None:
            if anchor not in self._raw:
                return {}  # most words of a text anchor no name: nothing kept for them (a corpus has ever new words)
            choose = self.choose_ids or (lambda ids: ids)
            group = self._groups[anchor] = {frozenset(keys): [choose(ids), {tuple(order) for order in orders},
                                                              conjunction]
                                            for keys, ids, orders, conjunction in self._raw.get(anchor, ())}
        return group

    def __contains__(self, key_set):
        frequency = self._frequency
        if not key_set or any(key not in frequency for key in key_set):
            return False
        return key_set in self.bucket(min(key_set, key=lambda key: (frequency[key], key)))

    def __getitem__(self, key_set):
        if key_set not in self:
            raise KeyError(key_set)
        return self.bucket(min(key_set, key=lambda key: (self._frequency[key], key)))[key_set]

    def holding(self, key):
        """The numbers of the names (their places in keying order) that hold ``key``."""
        found = self._holding.get(key)
        if found is None:
            numbers = self.stored["holding"].get(key)
            if numbers is None:
                return frozenset()  # a word of no name: nothing kept for it
            found = self._holding[key] = frozenset(numbers)
        return found

    def as_dict(self):
        """Every name, grouped by anchor (a test's view: a run never needs them all)."""
        return {key_set: entry for anchor in self._raw for key_set, entry in self.bucket(anchor).items()}


def _cache_path(settings):
    digest = json_sha256(settings)[:32]
    return cache_dir("matchers") / f"{digest}.json.gz"


def _cached_tables(settings):
    """The matcher's tables built before with ``settings`` (gzipped JSON in the user cache), or None."""
    import gzip
    import zlib

    import orjson  # parses the tables in a third of the standard library's time

    path = _cache_path(settings)
    try:
        with gzip.open(path, "rb") as handle:
            tables = orjson.loads(handle.read())
    except (OSError, ValueError, EOFError, zlib.error):
        return None  # absent, or unreadable (damaged compressed bytes are zlib's own error): built again
    if not isinstance(tables, dict) or tables.get("settings") != settings or \
            not {"clusters", "modifiers", "variants", "names"} <= tables.keys():
        return None
    return tables


def _store_tables(settings, tables):
    import gzip

    import orjson

    def write(temporary):
        with gzip.open(temporary, "wb", compresslevel=1) as handle:
            handle.write(orjson.dumps({"settings": settings, **tables}))

    try:
        write_atomically(_cache_path(settings), write)
    except OSError:
        pass  # a read-only cache costs the next run a rebuild, nothing else


def _fingerprint(table):
    """A short digest of a table of words ({adjective: [nouns]}, {entity id: [extra names]}): another WordNet or
    alias file is another cache file."""
    return json_sha256(table)[:16]


def _nearest(positions, at):
    """The position in sorted ``positions`` nearest to ``at`` (the earlier one on a tie)."""
    index = bisect_left(positions, at)
    if index == len(positions):
        return positions[-1]
    if index and at - positions[index - 1] <= positions[index] - at:
        return positions[index - 1]
    return positions[index]


def descendants(ontology, roots):
    """The ids of ``roots`` (those in ``ontology``) and of all their descendants."""
    keep = set()
    frontier = [root for root in roots if root in ontology]
    while frontier:
        entity_id = frontier.pop()
        if entity_id not in keep:
            keep.add(entity_id)
            frontier.extend(ontology.children.get(entity_id, ()))
    return keep
