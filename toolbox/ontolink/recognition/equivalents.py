"""Words that stand for one another in names, so that a name is also found in words it does not use.

Two sources, each giving pairs of word keys (``WordForms`` keys) that may replace one another:

- **Learned from the ontology.** Two names of one entity (its preferred name and exact synonyms: a
  related synonym is a looser name, "Eye disease" for *Abnormality of the eye*) whose content keys
  differ in one key on each side show the two keys standing for one another ("Renal anomaly" /
  "Kidney anomaly": "renal" for "kidney"). A pair is kept when at least ``min_entities`` entities
  show it (one entity's pair is a synonym list's accident; a pair shown by fifteen is how the
  ontology writes: "abnormality" / "anomaly", "tumor" / "neoplasm", "kidney" / "renal") and when
  the two words are (nearly) never in one name together.
- **WordNet's pertainyms** (``read_pertainyms``), when the user has a WordNet database: the
  relational adjectives of English and the nouns they pertain to ("otic" / "ear", "ophthalmic" /
  "eye", "cutaneous" / "cutis"), which an ontology written in one register may never pair itself
  (HPO has no "otic" at all, yet abstracts write "otic and renal anomalies").

The matcher adds, for each name of two or more content words, the names made by replacing one of its
words with an equivalent (``variant_names``): "Abnormality of the ear" is also found as "otic
anomalies". A variant never takes a key set that is already some entity's own name, and one-word
names get no variants (their derivations are often other concepts; see ``wordforms.fold``).
"""

import os
from collections import Counter, defaultdict

from ontolink.core.errors import InputError
from ontolink.core.io import open_input
from ontolink.recognition.wordforms import one_apart

# Entities that must show a pair of keys before the pair stands for one another (see the module docstring).
MIN_ENTITIES = 15
# Names that may hold both keys of a pair: words that stand for one another are (nearly) never in one name
# together; "bone" / "fracture" and "hand" / "finger" differ in dozens of synonym pairs, and dozens of names
# hold both ("Fractured hand bone", "Fingers of the hand"): one is no stand-in for the other.
MAX_TOGETHER = 3


def learned_pairs(key_sets, min_entities=MIN_ENTITIES, max_together=MAX_TOGETHER):
    """{(key, key)} shown by at least ``min_entities`` entities, whose keys at most ``max_together`` names hold
    together; ``key_sets``: each entity's names (its preferred name and exact synonyms) as sets of keys."""
    shown = Counter()
    for sets in key_sets:
        pairs = {(a, b) if a < b else (b, a) for a, b in one_apart(sets)}
        shown.update(pairs)  # an entity counts once for a pair, however many of its names show it
    candidates = {pair for pair, count in shown.items() if count >= min_entities}
    words = {key for pair in candidates for key in pair}
    together = Counter()
    for sets in key_sets:
        for key_set in sets:
            held = sorted(words.intersection(key_set))
            together.update((a, b) for index, a in enumerate(held) for b in held[index + 1:])
    return {pair for pair in candidates if together[pair] <= max_together}


def equivalent_keys(pairs):
    """key -> the keys that may replace it, from (key, key) pairs (both ways; not transitive: "small" may stand
    for "hypoplastic" and "hypoplastic" for "short" without "small" standing for "short")."""
    equivalents = defaultdict(set)
    for a, b in pairs:
        if a != b:
            equivalents[a].add(b)
            equivalents[b].add(a)
    return dict(equivalents)


def variant_names(key_sets_by_entity, equivalents, existing):
    """{key set: [ids]} of the names made by replacing one key of a name (two keys or more) with an
    equivalent, leaving out key sets in ``existing`` (names of their own); made in the same order whatever the
    hash seed (sets of strings are walked sorted), so the tables built from them are the same each run."""
    variants = {}
    for entity_id, sets in key_sets_by_entity.items():
        for key_set in sets:
            if len(key_set) < 2:
                continue
            for key in sorted(key_set):
                for other in sorted(equivalents.get(key, ())):
                    if other in key_set:
                        continue
                    variant = (key_set - {key}) | {other}
                    if variant in existing:
                        continue
                    ids = variants.setdefault(variant, [])
                    if entity_id not in ids:
                        ids.append(entity_id)
    return variants


def read_pertainyms(path):
    """{adjective: [nouns]} of a WordNet database: a directory holding ``data.adj`` and ``data.noun`` (the files
    of Princeton WordNet 3.x: Debian's ``wordnet-base`` in /usr/share/wordnet, an unzipped NLTK
    ``corpora/wordnet``), or a zip file holding them (NLTK's ``corpora/wordnet.zip``, which its downloader
    may leave zipped; an Open English WordNet release in that format).

    A pertainym pointer (``\\``) of an adjective synset names the noun one of its words pertains to; its
    source/target field says which word of each synset, and the target synset's offset is its byte offset
    in data.noun (wndb(5WN)). One-word lemmas only: a name's words are matched one by one.
    """
    adjectives, nouns, adjective_name, noun_name = _wordnet_files(str(path))
    wanted = []  # (adjective, noun synset offset, noun word number)
    for line_number, line in enumerate(adjectives.decode("utf-8", "replace").splitlines(), 1):
        if line.startswith("  ") or not line.strip():
            continue  # the licence header
        try:
            fields = line.split(" | ", 1)[0].split()
            count = int(fields[3], 16)
            lemmas = [fields[4 + 2 * index] for index in range(count)]
            at = 4 + 2 * count
            for pointer in range(int(fields[at])):
                symbol, offset, part, words = fields[at + 1 + 4 * pointer: at + 5 + 4 * pointer]
                if symbol == "\\" and part == "n":
                    if not (offset.isdigit() and len(words) == 4):  # int() would take "-5"
                        raise ValueError(offset)
                    source, target = int(words[:2], 16), int(words[2:], 16)
                    for lemma in lemmas if source == 0 else [lemmas[source - 1]]:
                        wanted.append((lemma.split("(")[0].lower(), int(offset), target))
        except (ValueError, IndexError):
            raise InputError(f"{adjective_name}:{line_number}: not a WordNet data line") from None
    pertainyms = defaultdict(list)
    for adjective, offset, target in wanted:
        end = nouns.find(b"\n", offset)
        fields = nouns[offset:end if end >= 0 else len(nouns)].decode("utf-8", "replace").split()
        try:
            if int(fields[0]) != offset:
                raise ValueError
            count = int(fields[3], 16)
            lemmas = [fields[4 + 2 * index].lower() for index in range(count)]
            chosen = lemmas if target == 0 else [lemmas[target - 1]]
        except (ValueError, IndexError):
            raise InputError(f"{noun_name}: no noun synset at byte {offset} (named in data.adj): not the same "
                             "WordNet as data.adj") from None
        for noun in chosen:
            if "_" not in adjective and "_" not in noun and noun not in pertainyms[adjective]:
                pertainyms[adjective].append(noun)
    return {adjective: sorted(found) for adjective, found in sorted(pertainyms.items()) if found}


def _wordnet_files(path):
    """(data.adj bytes, data.noun bytes, and the names to give them in messages) of a WordNet directory or zip.
    data.noun is read whole (16 MB in WordNet 3.0): its synsets are looked up by byte offset, and a zip
    member cannot seek back cheaply."""
    import zipfile
    import zlib

    if os.path.isdir(path):
        files = [os.path.join(path, name) for name in ("data.adj", "data.noun")]
        for file in files:
            if not os.path.isfile(file):
                raise InputError(f"{path}: not a WordNet database directory (no {os.path.basename(file)})")
        contents = []
        for file in files:
            # read as every input is: the line and size limits, a truncated or bomb-like gzip refused
            with open_input(file, binary=True, utf8=False) as handle:
                contents.append(handle.read())
        return contents[0], contents[1], files[0], files[1]
    if not os.path.isfile(path) or not zipfile.is_zipfile(path):
        raise InputError(f"{path}: not a WordNet database (a directory or a zip holding data.adj and data.noun)")
    try:
        with zipfile.ZipFile(path) as archive:
            members = {os.path.basename(name): name for name in archive.namelist()
                       if os.path.basename(name) in ("data.adj", "data.noun")}
            if len(members) < 2 or os.path.dirname(members["data.adj"]) != os.path.dirname(members["data.noun"]):
                raise InputError(f"{path}: not a WordNet database (no data.adj and data.noun in one folder of "
                                 "the zip)")
            return (archive.read(members["data.adj"]), archive.read(members["data.noun"]),
                    f"{path}:{members['data.adj']}", f"{path}:{members['data.noun']}")
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:  # zlib's: damaged compressed bytes
        raise InputError(f"{path}: unreadable zip ({error})") from None


def pertainym_pairs(pertainyms, key):
    """(key, key) pairs of ``pertainyms`` ({adjective: [nouns]}) under the word keying ``key``."""
    pairs = set()
    for adjective, found in pertainyms.items():
        adjective_key = key(adjective)
        for noun in found:
            noun_key = key(noun)
            if adjective_key and noun_key and adjective_key != noun_key:
                pairs.add((adjective_key, noun_key) if adjective_key < noun_key else (noun_key, adjective_key))
    return pairs
