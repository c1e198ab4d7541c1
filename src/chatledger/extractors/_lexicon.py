"""Word lists of the rule-based extractor, written for ChatLedger.

They are deliberately small and general (function words, everyday emotion words, calendar words,
common place and organisation nouns): the extractor is a transparent baseline, not a tuned model,
and every list here can be read in a minute.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


def wordset(text: str) -> frozenset[str]:
    """The white-space separated words of ``text`` (keeps long word lists readable)."""
    return frozenset(text.split())


STOPWORDS: frozenset[str] = wordset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just let me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    i'm i'll i've i'd you're you'll you've you'd we're we'll we've we'd he's she's it's that's
    there's what's who's here's let's can't won't isn't aren't wasn't weren't doesn't don't
    didn't haven't hasn't hadn't couldn't wouldn't shouldn't they're they'll they've
    yeah yes yep yup ok okay um uh uhm hmm mm mhm oh ah like well right really gonna wanna gotta
    got get gets getting go goes going gone know think mean want need make take give say said
    see look come put use tell ask try thing things stuff lot bit kind sort way something anything
    everything nothing one ones sure maybe actually still much many even back shall might must
    may hi hello hey thanks thank please great good fine cool nice also though anyway yet ever
    every would've could've lol haha
    """
)

# Adjectives skipped when looking for the head noun after a determiner ("the new setlist").
COMMON_ADJECTIVES: frozenset[str] = wordset(
    """
    new old big small little large whole other same first last next main extra good bad great
    best worst better worse entire current final additional spare few more most several certain
    real whole own different particular usual
    """
)

DETERMINERS: frozenset[str] = wordset("the this that these those our your my their his her its")

WEEKDAYS: tuple[str, ...] = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)

MONTHS: tuple[str, ...] = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

# A capitalised name whose last word is one of these is a place ("Baker Street").
PLACE_NOUNS: frozenset[str] = wordset(
    """
    street road avenue lane drive park station airport hotel cafe restaurant bar pub studio
    office school hospital beach lake river mountain campsite camp city town square bridge hall
    centre center mall library church museum gym stadium market island valley forest
    """
)

ORGANIZATION_NOUNS: frozenset[str] = wordset(
    """
    inc ltd llc corp corporation company co group bank university college institute agency
    council ministry foundation association team club
    """
)

EVENT_NOUNS: frozenset[str] = wordset(
    "festival conference summit party wedding concert meetup expo cup championship fair"
)

# Words next to a capitalised name that suggest it names a person ("you or Theo", "ask Ana").
PERSON_CUES: frozenset[str] = wordset(
    "and or with ask asked tell told call called thanks dear hey hi mr mrs ms dr"
)

# Everyday words per emotion (one list per emotion, no word in two lists).
EMOTION_WORDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "joy": wordset(
            """
            happy glad great love loved lovely awesome wonderful fun enjoy enjoyed delighted
            pleased fantastic amazing excellent yay haha lol nice perfect brilliant excited
            exciting thrilled cheerful
            """
        ),
        "trust": wordset(
            """
            trust agree agreed deal fair reliable promise confident rely honest certainly
            definitely absolutely understand thanks thank appreciate
            """
        ),
        "fear": wordset(
            """
            afraid scared worried worry worrying nervous anxious fear risk panic concerned
            dangerous terrified frightened unsafe
            """
        ),
        "sadness": wordset(
            """
            sad sorry unfortunately miss disappointed disappointing upset unhappy lonely cry
            depressed regret heartbroken tired lost
            """
        ),
        "anger": wordset(
            """
            angry mad furious annoyed annoying ridiculous hate stupid outrageous unacceptable
            damn hell rude fed insulting
            """
        ),
        "disgust": wordset(
            """
            disgusting gross awful nasty yuck horrible revolting pathetic terrible sick vile
            """
        ),
        "surprise": wordset(
            """
            wow surprised surprising unexpected whoa omg shocked suddenly astonished unbelievable
            """
        ),
        "anticipation": wordset(
            """
            forward soon plan planning hope hoping expect expecting upcoming ready
            prepare preparing eager wait
            """
        ),
    }
)

NEGATORS: frozenset[str] = wordset("not no never n't don't didn't isn't wasn't can't")

GREETING_WORDS: frozenset[str] = wordset("hi hello hey morning afternoon evening greetings howdy")
