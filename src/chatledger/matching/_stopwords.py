"""The one English stop-word list of the project (DESIGN.md §3: "stop words removed, one list
everywhere").

Subjects are short noun phrases ("the car", "our trip to Lisbon"); compared with plain
``token_set_ratio`` their function words count as shared content, so "the car" and "the Fig Tree"
score exactly 60 through "the" and are taken for one subject. This list holds the function words
that carry no subject of their own: articles and determiners, personal, possessive,
demonstrative, relative and indefinite pronouns, prepositions, conjunctions, auxiliary and
modal verbs, negation and a few degree/linking adverbs. It deliberately holds no nouns, verbs
or adjectives of content ("plan", "good", "time" are subjects people talk about), and leaves
out the function words that are as often nouns of a subject: "may" (the month), "will" (a
testament), "past" ("the past").

Words are in the form RapidFuzz's ``default_process`` leaves them: lower case, with every
non-alphanumeric character turned into a space. So contractions arrive split ("don't" →
"don t", "car's" → "car s") and their fragments (``s``, ``t``, ``d``, ``ll``, ``re``, ``ve``,
``m``) are listed too. Written for this project; not copied from another list.
"""

from __future__ import annotations

_ARTICLES_AND_DETERMINERS = """
a an the this that these those some any each every either neither no another other such
all both half few many much more most several own same
"""

_PRONOUNS = """
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his
himself she her hers herself it its itself they them their theirs themselves one ones
who whom whose which what whatever whoever whichever
someone somebody something anyone anybody anything everyone everybody everything nobody
nothing none
"""

_PREPOSITIONS = """
about above across after against along amid among around as at before behind below beneath
beside besides between beyond by despite down during except for from in inside into like near
of off on onto out outside over per since than through throughout till to toward towards
under underneath until unto up upon via with within without
"""

_CONJUNCTIONS = """
and or but nor so yet if then else because although though while whereas whether unless once
when whenever where wherever why how
"""

_AUXILIARIES_AND_MODALS = """
am is are was were be been being have has had having do does did doing done
would shall should can could might must ought
"""

_NEGATION_AND_ADVERBS = """
not very too also just only even quite rather really there here now again ever still
"""

_CONTRACTION_FRAGMENTS = """
s t d ll re ve m
"""

STOP_WORDS: frozenset[str] = frozenset(
    " ".join(
        (
            _ARTICLES_AND_DETERMINERS,
            _PRONOUNS,
            _PREPOSITIONS,
            _CONJUNCTIONS,
            _AUXILIARIES_AND_MODALS,
            _NEGATION_AND_ADVERBS,
            _CONTRACTION_FRAGMENTS,
        )
    ).split()
)
