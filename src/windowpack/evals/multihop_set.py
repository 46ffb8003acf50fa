"""Multi-hop needles, written for windowpack: two planted facts that must be chained.

The first fact answers the question only through a bridge ("the clinic's night nurse"); the
second names who the bridge is. The question shares words with the first fact, so keyword
retrieval finds it, and none with the second, which is reachable only through the bridge's
words in the first. Recall is both facts in the window. `tests/evals/test_multihop_set.py`
checks those word overlaps.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class MultiHopNeedle:
    """A question, the fact that answers it through a bridge, and the fact naming the bridge."""

    first: str
    second: str
    question: str
    answer: str


def _chain(first: str, second: str, question: str, answer: str) -> MultiHopNeedle:
    return MultiHopNeedle(first=first, second=second, question=question, answer=answer)


MULTIHOP_NEEDLES: tuple[MultiHopNeedle, ...] = (
    _chain(
        "The spare key to the boathouse hangs in the harbourmaster's office.",
        "The harbourmaster this season is Wendell Okoro.",
        "In whose office does the spare boathouse key hang?",
        "Wendell Okoro",
    ),
    _chain(
        "The prototype drone is stored in the locker of the lab's safety officer.",
        "The lab's safety officer is Priyanka Das.",
        "In whose locker is the prototype drone stored?",
        "Priyanka Das",
    ),
    _chain(
        "The winning lottery ticket was bought by the tallest member of the choir.",
        "The tallest member of the choir is Bjorn Aalto.",
        "Who bought the winning lottery ticket?",
        "Bjorn Aalto",
    ),
    _chain(
        "The recipe for the famous plum cake belongs to the innkeeper's sister.",
        "The innkeeper's sister is called Rosalind Fairweather.",
        "Whose recipe is the famous plum cake?",
        "Rosalind Fairweather",
    ),
    _chain(
        "Only the treasurer of the rowing club knows the safe combination.",
        "The treasurer of the rowing club is Emeka Obi.",
        "Who knows the safe combination?",
        "Emeka Obi",
    ),
    _chain(
        "The lost violin was returned by the youngest firefighter at Station 9.",
        "The youngest firefighter at Station 9 is Marta Quintero.",
        "Who returned the lost violin?",
        "Marta Quintero",
    ),
    _chain(
        "The mural on the bakery wall was painted by the mayor's nephew.",
        "The mayor's nephew is Tariq Benali.",
        "Who painted the mural on the bakery wall?",
        "Tariq Benali",
    ),
    _chain(
        "The missing ledger was last signed out by the deputy librarian.",
        "The deputy librarian is Agnes Whitlock.",
        "Who last signed out the missing ledger?",
        "Agnes Whitlock",
    ),
    _chain(
        "The greenhouse orchids are watered by whoever runs the Tuesday shift.",
        "The Tuesday shift is run by Kenji Watanabe.",
        "Who waters the greenhouse orchids?",
        "Kenji Watanabe",
    ),
    _chain(
        "The password to the observatory computer was set by the head astronomer.",
        "The head astronomer is Lucia Balogun.",
        "Who set the password to the observatory computer?",
        "Lucia Balogun",
    ),
    _chain(
        "The stray cat sleeps in the van of the town's only locksmith.",
        "The town's only locksmith is Gideon Marsh.",
        "In whose van does the stray cat sleep?",
        "Gideon Marsh",
    ),
    _chain(
        "The festival fireworks were ordered by the events committee chair.",
        "The events committee chair is Sunniva Eklund.",
        "Who ordered the festival fireworks?",
        "Sunniva Eklund",
    ),
    _chain(
        "The antique clock was repaired by the eldest of the Varga brothers.",
        "The eldest Varga brother is Laszlo Varga.",
        "Who repaired the antique clock?",
        "Laszlo Varga",
    ),
    _chain(
        "The blue canoe belongs to the lighthouse keeper's daughter.",
        "The lighthouse keeper's daughter is Freya Lindqvist.",
        "Who owns the blue canoe?",
        "Freya Lindqvist",
    ),
    _chain(
        "The vaccine samples are guarded by the clinic's night nurse.",
        "The clinic's night nurse is Oluwaseun Adeyemi.",
        "Who guards the vaccine samples?",
        "Oluwaseun Adeyemi",
    ),
    _chain(
        "The school chess trophy was won by the captain of Form 4B.",
        "The captain of Form 4B is Anouk Jansen.",
        "Who won the school chess trophy?",
        "Anouk Jansen",
    ),
)
