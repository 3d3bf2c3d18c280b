"""What a value stated on a sensitive field means to the agent, read from its words.

Beside the acts the types document declares (:func:`.sensitive.acts_for`), a person
names foods: an allergy or intolerance to one ("alergia grave a amendoim",
"soy alérgico al maní", "allergic to peanuts", "peanut allergy") is a hard "sem
amendoim"; an avoidance ("só evito pão", "I avoid bread") a soft one; an act said as
such ("sem lactose", "without eggs") the act, when what it does without is a food
``foods.toml`` lists or an act the types document declares ("sem restrição", "without
issues" name no food: no act). What follows a negation ("não sou celíaco",
"no soy", "not", "não tenho", "sem ser"; a bare "no" only before a verb or a condition,
since in Portuguese it is "in the") is said *not* to hold, until the clause ends or
"e" / "y" / "and" starts a new statement: its acts are negated, never served (and a
newer negation outweighs an older statement). A negated verb of eating or drinking ("não
como glúten", "no puedo comer gluten ni lactosa", "I don't eat peanuts") is doing
without, as "sem X" is: a hard act. Clauses end at punctuation and at "mas",
"pero", "but"; a comma or semicolon that goes on with a list of foods ("alergia a ovo,
leite e soja") joins it. A clause nothing reads is asked, also beside clauses read
("alergia a amendoim, kosher": "sem amendoim", and the field asked).

A clause that says there is nothing to act on ("sem restrições", "como de tudo", "sin
restricciones", "I eat everything", "none") reads as that: no act, and nothing to ask.
A "sem X" whose X is neither a food nor an act is not understood: the field is asked.

A food is said in the block's language when ``foods.toml`` lists it, else quoted as the
person wrote it (its words alone, three at most, no marks). Nothing else of the words
is kept: the condition's own words never reach the agent.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turnstream.core.constraints.sensitive import acts_for, normalized
from turnstream.core.constraints.text import quoted
from turnstream.models.object_types import Act, Labels, ObjectTypes

__all__ = ["Reading", "read_refusal", "read_sensitive"]

_FOODS = Path(__file__).with_name("foods.toml")
#: A word, or a mark that ends a clause.
_TOKEN = re.compile(r"[^\W_]+|[,;.!?()\[\]\n]")
_BREAKS = frozenset(",;.!?()[]\n")
_CONTRAST = frozenset({"mas", "porem", "pero", "but", "however", "though", "although", "aunque"})
_NEGATORS = frozenset(
    {"nao", "nunca", "nem", "jamais", "not", "never", "nor", "no", "ni", "tampoco", "jamas"}
    | {"dont", "doesnt", "isnt", "arent", "didnt", "havent", "hasnt", "cant", "aint"}
)
#: The first half of "don't" once the apostrophe splits it ("don", "t").
_NT = frozenset({"don", "doesn", "isn", "aren", "didn", "haven", "hasn", "can", "ain", "wasn"})
_NOT_BEING = frozenset({("sem", "ser"), ("sin", "ser"), ("without", "being")})
_ALLERGY = frozenset(
    {"alergia", "alergias", "alergico", "alergica", "alergicos", "alergicas"}
    | {"intolerancia", "intolerancias", "intolerante", "intolerantes"}
    | {"allergic", "allergy", "allergies", "intolerant", "intolerance", "intolerances"}
)
#: Words that start a statement: after "e" / "y" / "and" they end a negation; after a
#: bare "no" they make it one ("no soy").
_VERBS = frozenset(
    {"soy", "tengo", "es", "estoy", "como", "padezco", "sufro", "tomo", "puedo", "me", "se"}
    | {"sou", "tenho", "estou", "sofro", "am", "have", "has", "longer"}
)
_ANEW = _VERBS | frozenset({"i", "eu", "yo", "so", "solo", "just"})
#: English names the food first ("peanut allergy").
_NOUN_FIRST = frozenset({"allergy", "allergies", "intolerance", "intolerances"})
_AVOID = frozenset({"evito", "evita", "evitamos", "evitar", "evitando", "avoid", "avoids"})
#: Verbs of eating or drinking: after a negation, what follows is done without ("não como
#: glúten", "no puedo comer gluten ni lactosa", "I don't eat pork").
_EAT = frozenset(
    {"como", "come", "comemos", "comer", "tomo", "toma", "tomamos", "tomar", "bebo", "bebe"}
    | {"beber", "consumo", "consome", "consume", "consumir", "ingiro", "ingiero", "ingerir"}
    | {"eat", "eats", "drink", "drinks", "consumes", "touch"}
)
#: Words between the negation and the verb ("não posso mais comer", "can no longer eat").
_MODAL = frozenset(
    {"posso", "pode", "podemos", "puedo", "puede", "consigo", "devo", "debo"}
    | {"can", "could", "should", "must", "may", "do", "does", "did", "will", "t", "no"}
    | {"mais", "ya", "more", "longer", "anymore", "eu", "yo", "i", "we", "nunca", "never"}
)
#: "nem" / "ni" / "nor" go on with a list of foods not eaten as "and" would.
_NOR = frozenset({"nem", "ni", "nor"})
_WITHOUT = frozenset({"sem", "sin", "without"})
_TO = frozenset({"a", "ao", "aos", "as", "al", "to", "de", "do", "da", "dos", "das", "del"})
_ARTICLES = frozenset(
    {"o", "os", "a", "as", "el", "la", "los", "las", "the", "um", "uma", "un", "una", "an"}
    | {"my", "meu", "minha", "mi", "mis", "some", "any", "todo", "toda", "all"}
)
#: Words of degree or kind left out of a food ("alergia grave a", "severe").
_DEGREE = frozenset(
    {"grave", "graves", "severa", "severo", "severas", "severos", "severe", "leve", "leves"}
    | {"mild", "forte", "fuerte", "strong", "seria", "serio", "serious", "bad", "muito"}
    | {"muy", "very", "alimentar", "alimentaria", "food", "ligeira", "ligera", "moderada"}
    | {"moderate", "tambem", "tambien", "also"}
)
#: Words that join foods ("amendoim e camarão"): a food after one counts only when
#: ``foods.toml`` lists it.
_AND = frozenset({"e", "y", "and", "ou", "o", "or"})
#: Words that end a food ("alergia a amendoim desde criança").
_STOP = (
    _AND
    | _NEGATORS
    | _ALLERGY
    | _AVOID
    | _WITHOUT
    | frozenset({"desde", "since", "que", "porque", "because", "quando", "cuando", "when"})
    | frozenset({"com", "con", "with", "em", "en", "in", "on", "at", "para", "for", "por"})
    | frozenset({"sou", "soy", "am", "is", "tenho", "tengo", "have", "has", "ha", "he"})
)
#: A food is a few words at most; longer is no food this module can tell.
_FOOD_WORDS = 3
_WORD_CHARS = 20  # "without “…”" stays within a label's 80 characters
#: Words left out when telling whether a clause says there is nothing to act on.
_FILLER = frozenset(
    {"eu", "yo", "i", "mesmo", "really", "any", "alguma", "algum", "alguna", "alguno"}
    | {"nenhuma", "nenhum", "ninguna", "ninguno", "ningun", "at", "all", "tipo", "kind"}
    | {"alimentar", "alimentares", "alimentaria", "alimentarias", "alimenticia"}
    | {"alimenticias", "dietary", "food", "special", "especial", "especiais", "especiales"}
    | {"posso", "puedo", "can", "basicamente", "basically", "praticamente", "practically"}
)
#: What a person has none of when there is nothing to act on ("sem restrições").
_RESTRICTIONS = (
    *("restricao", "restricoes", "restriccion", "restricciones", "restriction"),
    *("restrictions", "problema", "problemas", "problem", "problems", "issue", "issues"),
)
_NO = ("sem", "sin", "without", "no", "nao tenho", "no tengo", "have no", "don t have")
_NOTHING_SAID = (
    *(f"{no} {word}" for no in _NO for word in _RESTRICTIONS),
    *("como de tudo", "como tudo", "comer de tudo", "como de todo", "como todo"),
    *("comer de todo", "eat everything", "eat anything"),
)
#: A clause, its filler left out, that says there is nothing to act on: one or more of
#: these phrases ("como de tudo sem restrições").
_NOTHING = re.compile(rf"(?:(?:^| )(?:(?:e|y|and) )?(?:{'|'.join(_NOTHING_SAID)}))+")
#: The same, said alone as the whole clause ("nenhuma", "none").
_NOTHING_ALONE = frozenset({"nenhuma", "nenhum", "ninguna", "ninguno", "none", "nada", "nothing"})


@dataclass(frozen=True)
class _Food:
    """A food: its act's name part and its words per language."""

    name: str
    words: dict[str, str]
    #: Whether ``foods.toml`` lists it (else it is the person's words, quoted).
    listed: bool = True


@dataclass(frozen=True)
class Reading:
    """What one sensitive value means: hard acts (name, act), soft avoidances (name,
    the food's words per language), the names of acts said not to hold, whether it says
    there is nothing to act on (``unrestricted``: "sem restrições", no clause left
    unread), and whether something of it is left unread (``unclear``: a clause nothing
    reads, or a "sem X" whose X no food nor act names, "sem sentido")."""

    acts: list[tuple[str, Act]] = field(default_factory=list)
    avoided: list[tuple[str, Labels]] = field(default_factory=list)
    negated: set[str] = field(default_factory=set)
    unrestricted: bool = False
    unclear: bool = False

    @property
    def understood(self) -> bool:
        """Whether the value was read (an act, an avoidance, a negation, or that there is
        nothing to act on) and no "sem X" of it was left unread."""
        read = self.acts or self.avoided or self.negated or self.unrestricted
        return bool(read) and not self.unclear


@functools.cache
def _foods() -> dict[str, _Food]:
    """Every word of ``foods.toml`` (normalized) -> its food."""
    found: dict[str, _Food] = {}
    for name, entry in tomllib.loads(_FOODS.read_text(encoding="utf-8")).items():
        food = _Food(name, {lang: entry[lang] for lang in ("pt", "en", "es")})
        for word in [name, entry["pt"], entry["en"], entry["es"], *entry.get("said", ())]:
            found.setdefault(normalized(word.replace("_", " ")), food)
    return found


def _clauses(text: str) -> list[list[tuple[str, str]]]:
    """The clauses of ``text``, each its words as (as written, normalized). A comma or
    semicolon after an allergy, an avoidance or a "sem" goes on with its list when a food
    ``foods.toml`` lists follows it ("alergia a ovo, leite e soja", "allergic to nuts,
    eggs"): there it joins as "and" would."""
    tokens = [(token, normalized(token)) for token in _TOKEN.findall(text)]
    clauses: list[list[tuple[str, str]]] = [[]]
    for i, (token, key) in enumerate(tokens):
        if token in ",;" and _lists_on(clauses[-1], tokens[i + 1 :]):
            clauses[-1].append((token, "and"))
        elif token in _BREAKS or key in _CONTRAST:
            clauses.append([])
        elif key:
            clauses[-1].append((token, key))
    return [c for c in clauses if c]


def _lists_on(clause: Sequence[tuple[str, str]], rest: Sequence[tuple[str, str]]) -> bool:
    """Whether ``rest`` goes on with a list of foods ``clause`` started: the clause leads
    to foods (an allergy, an avoidance, a "sem") and ``rest`` starts, past joining words,
    articles and a negation, with a food ``foods.toml`` lists."""
    if not any(key in _ALLERGY | _AVOID | _WITHOUT for _, key in clause):
        return False
    words = [key for _, key in rest]
    i = 0
    while i < len(words) and words[i] in _AND | _ARTICLES | _TO | _NEGATORS:
        i += 1
    phrase = []
    while i < len(words) and words[i] and words[i] not in _STOP and rest[i][0] not in _BREAKS:
        phrase.append(words[i])
        i += 1
    return " ".join(phrase) in _foods()


def _negates(keys: Sequence[str], i: int) -> bool:
    """Whether a negation starts at ``keys[i]``. A bare "no" negates only before a verb
    ("no soy") or a condition ("no peanut allergy"): in Portuguese it is "in the"
    ("no verão")."""
    key, following = keys[i], keys[i + 1 : i + 3]
    if key == "no":
        return bool(following) and (following[0] in _VERBS or any(k in _ALLERGY for k in following))
    if key == "t":  # "don't", split at the apostrophe
        return i > 0 and keys[i - 1] in _NT
    return key in _NEGATORS or tuple(keys[i : i + 2]) in _NOT_BEING


def _segments(words: Sequence[tuple[str, str]]) -> list[tuple[bool, list[tuple[str, str]]]]:
    """The clause in runs said (``True``) and negated (``False``): a negation holds from
    its word until "e" / "y" / "and" starts a new statement ("não sou celíaco e tenho
    alergia a amendoim": the allergy is said)."""
    keys = [k for _, k in words]
    runs: list[tuple[bool, list[tuple[str, str]]]] = [(True, [])]
    for i, word in enumerate(words):
        said = runs[-1][0]
        if said and _negates(keys, i):
            runs.append((False, []))
        elif (
            not said
            and keys[i] in _AND
            and i + 1 < len(keys)
            and keys[i + 1] in _ANEW | _ALLERGY | _AVOID
        ):
            runs.append((True, []))
        runs[-1][1].append(word)
    return [run for run in runs if run[1]]


def _food_of(words: Sequence[tuple[str, str]]) -> _Food | None:
    """The food ``words`` name: one ``foods.toml`` lists, else the words quoted."""
    if not words or len(words) > _FOOD_WORDS or any(len(k) > _WORD_CHARS for _, k in words):
        return None
    key = " ".join(k for _, k in words)
    listed = _foods().get(key)
    if listed is not None:
        return listed
    said = quoted(" ".join(w.lower() for w, _ in words))
    if not said:
        return None
    return _Food(key.replace(" ", "_"), dict.fromkeys(("pt", "en", "es"), said), listed=False)


def _foods_from(
    words: Sequence[tuple[str, str]], at: int, every_as_said: bool = False
) -> list[_Food]:
    """The foods named from ``at`` on: the first as said (an article and words of degree
    left out), each next one after "e"/"y"/"and"/"or" only when ``foods.toml`` lists it
    (or as said too, ``every_as_said``)."""
    found: list[_Food] = []
    i = at
    while i < len(words):
        skip = _ARTICLES | _TO if found else _ARTICLES  # "y al huevo", "e a os ovos"
        while words[i][1] in skip and i + 1 < len(words):
            i += 1
        phrase = []
        while i < len(words) and words[i][1] not in _STOP:
            if words[i][1] not in _DEGREE:
                phrase.append(words[i])
            i += 1
        listed_only = found and not every_as_said
        food = _foods().get(" ".join(k for _, k in phrase)) if listed_only else _food_of(phrase)
        if food is None:
            break
        found.append(food)
        if i >= len(words) or words[i][1] not in _AND:
            break
        i += 1
    return found


def _allergens(words: Sequence[tuple[str, str]]) -> list[_Food]:
    """The foods an allergy or intolerance is said to: "alergia (grave) a X", "X allergy"."""
    keys = [k for _, k in words]
    found: list[_Food] = []
    for i, key in enumerate(keys):
        if key not in _ALLERGY:
            continue
        j = i + 1
        while j < len(keys) and keys[j] in _DEGREE:
            j += 1
        if j < len(keys) and keys[j] in _TO:
            found.extend(_foods_from(words, j + 1))
        elif key in _NOUN_FIRST:
            before = [w for w in words[max(0, i - 2) : i] if w[1] not in _DEGREE | _ARTICLES]
            two = _foods().get(" ".join(k for _, k in before))
            one = _food_of(before[-1:]) if before and before[-1][1] not in _STOP else None
            food = two or one
            if food is not None:
                found.append(food)
    return found


def _after(words: Sequence[tuple[str, str]], leads: frozenset[str]) -> list[_Food]:
    """The foods named after a word of ``leads`` ("evito pão", "sem lactose")."""
    return [
        food
        for i, (_, key) in enumerate(words)
        if key in leads
        for food in _foods_from(words, i + 1)
    ]


def _done_without(
    types: ObjectTypes | None, attr: str, words: Sequence[tuple[str, str]]
) -> tuple[list[_Food], bool]:
    """The foods "sem" / "sin" / "without" name ("sem lactose"), the first a food
    ``foods.toml`` lists or one an act of the types document does without; and whether
    one names anything else ("sem sentido": no act, the field asked) but restrictions
    ("sem restrições")."""
    foods: list[_Food] = []
    unclear = False
    for i, (_, key) in enumerate(words):
        if key not in _WITHOUT or (i + 1 < len(words) and words[i + 1][1] in _RESTRICTIONS):
            continue
        named = _foods_from(words, i + 1)
        if named and (named[0].listed or _declared(types, attr, named[0]) is not None):
            foods.extend(named)
        else:
            unclear = True
    return foods, unclear


def _not_eaten(
    types: ObjectTypes | None, attr: str, words: Sequence[tuple[str, str]]
) -> tuple[list[_Food], bool]:
    """The foods a negated run says are not eaten or drunk ("não como glúten", "no puedo
    comer gluten ni lactosa", "I can't eat peanuts"): done without, as "sem X" is, each a
    food ``foods.toml`` lists or an act of the types document does without; and whether
    the verb names anything else or nothing (the field asked: "não como carne nem glúten"
    is "sem glúten", and the diet asked)."""
    keys = [k for _, k in words]
    for start in (j for j in range(len(keys)) if j == 0 or _negates(keys, j)):
        i = start + 1
        while i < len(keys) and keys[i] in _MODAL:
            i += 1
        if i >= len(keys) or keys[i] not in _EAT:
            continue
        listed = [(w, "and" if k in _NOR else k) for w, k in words[i + 1 :]]
        named = _foods_from(listed, 0, every_as_said=True)
        known = [f for f in named if f.listed or _declared(types, attr, f) is not None]
        return known, len(known) < len(named) or not named
    return [], False


def _says_nothing(words: Sequence[tuple[str, str]]) -> bool:
    """Whether a clause says there is nothing to act on ("sem restrições", "como de
    tudo", "I eat everything", "nenhuma")."""
    keys = [k for _, k in words]
    if " ".join(keys) in _NOTHING_ALONE:
        return True
    return _NOTHING.fullmatch(" ".join(k for k in keys if k not in _FILLER)) is not None


def _declared(types: ObjectTypes | None, attr: str, food: _Food) -> tuple[str, Act] | None:
    """The act the types document declares for doing without ``food`` ("sem glúten":
    ``gluten_free``), if any."""
    key = food.name.replace("_", " ")
    for words in ({key}, {normalized(w) for w in food.words.values()}):
        said = [f"{lead} {w}" for w in words for lead in ("sem", "sin", "without")]
        declared = acts_for(types, attr, [*said, *(f"{w} free" for w in words)])
        if declared:
            return declared[0]
    return None


def _without(types: ObjectTypes | None, attr: str, food: _Food) -> tuple[str, Act]:
    """The act of doing without ``food``: the one the types document declares for it
    (:func:`_declared`), else "sem X" / "without X" / "sin X"."""
    declared = _declared(types, attr, food)
    if declared is not None:
        return declared
    labels = Labels(
        pt=f"sem {food.words['pt']}", en=f"without {food.words['en']}", es=f"sin {food.words['es']}"
    )
    return f"without_{food.name}", Act(labels=labels, said=[food.name.replace("_", " ")])


def read_sensitive(types: ObjectTypes | None, attr: str, said: Any) -> Reading:
    """What ``said`` (a value, or a list of them) on the sensitive field ``attr`` means:
    the declared acts and the foods done without its affirmed parts name, the foods it
    avoids, the acts its negated parts name (never served), whether it says there is
    nothing to act on and whether a "sem X" of it names no food."""
    reading = Reading()
    nothing = unread = unclear = False

    def _doing_without(food: _Food) -> tuple[str, Act]:
        return _without(types, attr, food)

    values = said if isinstance(said, list) else [said]
    for clause in (c for v in values if v is not None for c in _clauses(str(v))):
        if _says_nothing(clause):
            nothing = True
            continue
        read = False  # whether this clause names anything, said before or not
        for said_run, words in _segments(clause):
            text = " ".join(k for _, k in words)
            if not said_run:
                not_eaten, unnamed = _not_eaten(types, attr, words)
                for name, act in map(_doing_without, not_eaten):
                    if name not in {n for n, _ in reading.acts}:
                        reading.acts.append((name, act))
                denied = [*acts_for(types, attr, text), *map(_doing_without, _allergens(words))]
                reading.negated.update(n for n, _ in denied)
                unclear = unclear or unnamed
                read = read or bool(denied or not_eaten) or unnamed
                continue
            done_without, unnamed = _done_without(types, attr, words)
            unclear = unclear or unnamed
            foods = [*_allergens(words), *done_without]
            acts = [*acts_for(types, attr, text), *map(_doing_without, foods)]
            avoided = _after(words, _AVOID)
            read = read or bool(acts or avoided)
            for name, act in acts:
                if name not in {n for n, _ in reading.acts}:
                    reading.acts.append((name, act))
            for food in avoided:
                name = f"avoid_{food.name}"
                if name not in {n for n, _ in reading.avoided}:
                    reading.avoided.append((name, Labels(**food.words)))
        unread = unread or not read
    negated = reading.negated - {n for n, _ in reading.acts}
    # A clause nothing reads is more to know: asked, also beside clauses read.
    unclear = unclear or unread
    return Reading(reading.acts, reading.avoided, negated, nothing and not unread, unclear)


def read_refusal(
    types: ObjectTypes | None, attr: str, refused: Sequence[Any], *, hard: bool
) -> Reading:
    """What refusing ``refused`` on the sensitive field ``attr`` means (a preference
    ``must_not in``, ``must ne``, ``avoid``): a condition an act names ("vegano",
    "gluten-free") is said not to hold; a food (one ``foods.toml`` lists or a declared
    act does without, "gluten") is done without, a hard act when ``hard`` ("sem
    glúten"), else a soft avoid; anything else is not understood (asked, never
    echoed)."""
    reading = Reading()
    unclear = False
    for value in (v for v in refused if v is not None):
        words = [w for clause in _clauses(str(value)) for w in clause]
        foods = _foods_from(words, 0)
        if named := acts_for(types, attr, " ".join(k for _, k in words)):
            reading.negated.update(n for n, _ in named)
        elif len(foods) == 1 and (foods[0].listed or _declared(types, attr, foods[0])):
            if hard:
                reading.acts.append(_without(types, attr, foods[0]))
            else:
                reading.avoided.append((f"avoid_{foods[0].name}", Labels(**foods[0].words)))
        else:
            unclear = True
    return Reading(reading.acts, reading.avoided, reading.negated, unclear=unclear)
