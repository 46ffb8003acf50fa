"""Associative needles (NoLiMa-style), written for windowpack: the link is knowledge, not words.

Each needle states a fact about a named character; its question asks for the character by
something the fact implies without sharing a content word with it (a landmark and its city,
an object and its use, a person's work and its job title, a cause and its effect). A reader
must know that the Atomium stands in Brussels to answer "Which character lives in Belgium?".
Each item also has a lexical-overlap *control*: the same question asked in the needle's own
words, which keyword retrieval finds easily. The gap between the two is what the task
measures. `tests/evals/test_associative_set.py` checks that no question shares a content
word (stemmed, function words dropped) with its needle and that every control does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["place-landmark", "object-use", "person-role", "cause-effect"]


@dataclass(frozen=True, kw_only=True)
class AssociativeNeedle:
    """One planted fact, the question that reaches it only by association, and a control."""

    kind: Kind
    needle: str
    question: str
    control: str
    answer: str


def _items(kind: Kind, rows: list[tuple[str, str, str, str]]) -> list[AssociativeNeedle]:
    return [
        AssociativeNeedle(kind=kind, needle=n, question=q, control=c, answer=a)
        for n, q, c, a in rows
    ]


PLACES = _items(
    "place-landmark",
    [
        (
            "Tomasz Wilk jogs past the Atomium every morning.",
            "Which character spends time in Belgium?",
            "Which character jogs past the Atomium every morning?",
            "Tomasz Wilk",
        ),
        (
            "Ines Okafor proposed to her partner under the Eiffel Tower.",
            "Who got engaged in France?",
            "Who proposed to a partner under the Eiffel Tower?",
            "Ines Okafor",
        ),
        (
            "Lars Nyberg painted the view from the Charles Bridge.",
            "Which artist worked in Prague?",
            "Who painted the view from the Charles Bridge?",
            "Lars Nyberg",
        ),
        (
            "Mirela Costa sold ice cream beside the Colosseum.",
            "Who had a summer job in Italy?",
            "Who sold ice cream beside the Colosseum?",
            "Mirela Costa",
        ),
        (
            "Hamid Rahimi photographed the Golden Gate at dawn.",
            "Which character visited California?",
            "Who photographed the Golden Gate at dawn?",
            "Hamid Rahimi",
        ),
        (
            "Sunita Rao rented a flat overlooking the Marina Bay Sands.",
            "Who stayed in Singapore?",
            "Who rented a flat overlooking the Marina Bay Sands?",
            "Sunita Rao",
        ),
        (
            "Oskar Lind bought a scarf near the Hagia Sophia.",
            "Which character went shopping in Turkey?",
            "Who bought a scarf near the Hagia Sophia?",
            "Oskar Lind",
        ),
        (
            "Beatriz Moreno sketched the towers of the Sagrada Familia.",
            "Who drew something in Spain?",
            "Who sketched the towers of the Sagrada Familia?",
            "Beatriz Moreno",
        ),
        (
            "Kofi Mensah ran a marathon that finished at the Brandenburg Gate.",
            "Which character raced in Germany?",
            "Who ran a marathon that finished at the Brandenburg Gate?",
            "Kofi Mensah",
        ),
        (
            "Ayla Demir watched fireworks over the Opera House on New Year's Eve.",
            "Who celebrated in Australia?",
            "Who watched fireworks over the Opera House on New Year's Eve?",
            "Ayla Demir",
        ),
        (
            "Pieter de Vries fed pigeons in front of the Rijksmuseum.",
            "Which character spent an afternoon in the Netherlands?",
            "Who fed pigeons in front of the Rijksmuseum?",
            "Pieter de Vries",
        ),
        (
            "Nadia Haddad took her grandmother to see the pyramids of Giza.",
            "Who travelled to Egypt?",
            "Who took a grandmother to see the pyramids of Giza?",
            "Nadia Haddad",
        ),
    ],
)

OBJECTS = _items(
    "object-use",
    [
        (
            "Greta Holm always carries a tourniquet in her bag.",
            "Who could stop heavy bleeding?",
            "Who always carries a tourniquet in a bag?",
            "Greta Holm",
        ),
        (
            "Dmitri Volkov keeps a theodolite in his truck.",
            "Which character surveys land for a living?",
            "Who keeps a theodolite in a truck?",
            "Dmitri Volkov",
        ),
        (
            "Chloe Martin bought a new metronome yesterday.",
            "Who is practising to keep a steady tempo?",
            "Who bought a new metronome yesterday?",
            "Chloe Martin",
        ),
        (
            "Farid Nasser owns an abacus that belonged to his grandfather.",
            "Which character can add up sums with beads?",
            "Who owns an abacus that belonged to a grandfather?",
            "Farid Nasser",
        ),
        (
            "Elif Kaya packed a snorkel for the trip.",
            "Who plans to look at coral under water?",
            "Who packed a snorkel for the trip?",
            "Elif Kaya",
        ),
        (
            "Jonas Berg sharpened his scythe on Sunday.",
            "Which character is about to cut tall grass?",
            "Who sharpened a scythe on Sunday?",
            "Jonas Berg",
        ),
        (
            "Aiko Tanaka borrowed a stethoscope from the clinic.",
            "Who listened to a heartbeat?",
            "Who borrowed a stethoscope from the clinic?",
            "Aiko Tanaka",
        ),
        (
            "Marek Nowak installed a dehumidifier in the basement.",
            "Which character was fighting damp air at home?",
            "Who installed a dehumidifier in the basement?",
            "Marek Nowak",
        ),
        (
            "Leila Sadeghi keeps a jeweller's loupe on her desk.",
            "Who examines gemstones closely?",
            "Who keeps a jeweller's loupe on a desk?",
            "Leila Sadeghi",
        ),
        (
            "Tobias Gruen never travels without a compass.",
            "Which character can always tell which way is north?",
            "Who never travels without a compass?",
            "Tobias Gruen",
        ),
        (
            "Priya Nair ordered a kiln for her studio.",
            "Who fires pottery?",
            "Who ordered a kiln for a studio?",
            "Priya Nair",
        ),
        (
            "Henrik Dahl fitted snow chains to the car.",
            "Which character is preparing to drive on icy mountain roads?",
            "Who fitted snow chains to the car?",
            "Henrik Dahl",
        ),
    ],
)

ROLES = _items(
    "person-role",
    [
        (
            "Ottilie Brandt presides over the county court.",
            "Which character is a judge?",
            "Who presides over the county court?",
            "Ottilie Brandt",
        ),
        (
            "Samuel Idowu steers the ferry across the strait each night.",
            "Who is the captain of a boat?",
            "Who steers the ferry across the strait each night?",
            "Samuel Idowu",
        ),
        (
            "Mei Lin removes appendixes at the city hospital.",
            "Which character is a surgeon?",
            "Who removes appendixes at the city hospital?",
            "Mei Lin",
        ),
        (
            "Andres Vidal picks the national football squad.",
            "Who coaches a sports team?",
            "Who picks the national football squad?",
            "Andres Vidal",
        ),
        (
            "Fatima Zahra kneads dough before sunrise at the corner shop.",
            "Who works as a baker?",
            "Who kneads dough before sunrise at the corner shop?",
            "Fatima Zahra",
        ),
        (
            "Colm Brennan delivers letters along Harbour Road.",
            "Which character is a postman?",
            "Who delivers letters along Harbour Road?",
            "Colm Brennan",
        ),
        (
            "Yara Suleiman waves a baton in front of the city orchestra.",
            "Who is a conductor?",
            "Who waves a baton in front of the city orchestra?",
            "Yara Suleiman",
        ),
        (
            "Viktor Horvat flies cargo jets between Oslo and Lisbon.",
            "Which character is a pilot?",
            "Who flies cargo jets between Oslo and Lisbon?",
            "Viktor Horvat",
        ),
        (
            "Amara Diallo defends clients in criminal trials.",
            "Who works as a lawyer?",
            "Who defends clients in criminal trials?",
            "Amara Diallo",
        ),
        (
            "Rolf Becker repairs leaking pipes in old houses.",
            "Which character is a plumber?",
            "Who repairs leaking pipes in old houses?",
            "Rolf Becker",
        ),
        (
            "Keiko Mori grades algebra homework for her thirty pupils.",
            "Who is a school teacher?",
            "Who grades algebra homework for thirty pupils?",
            "Keiko Mori",
        ),
        (
            "Ilse Brand patrols the museum's vault at night with a torch.",
            "Which character works in security?",
            "Who patrols the museum's vault at night with a torch?",
            "Ilse Brand",
        ),
    ],
)

CAUSES = _items(
    "cause-effect",
    [
        (
            "Bruno Lecomte forgot to water his tomatoes for three weeks.",
            "Whose plants withered?",
            "Who forgot to water tomatoes for three weeks?",
            "Bruno Lecomte",
        ),
        (
            "Sofia Rossi left the oven on all night.",
            "Which character's kitchen nearly caught fire?",
            "Who left the oven on all night?",
            "Sofia Rossi",
        ),
        (
            "Jakub Kral skipped breakfast and lunch before the exam.",
            "Who felt faint from hunger?",
            "Who skipped breakfast and lunch before the exam?",
            "Jakub Kral",
        ),
        (
            "Noor Hassan ran the dishwasher with laundry detergent.",
            "Whose floor got covered in foam?",
            "Who ran the dishwasher with laundry detergent?",
            "Noor Hassan",
        ),
        (
            "Erik Sand stayed out in the midday sun without a hat.",
            "Which character got sunburnt?",
            "Who stayed out in the midday sun without a hat?",
            "Erik Sand",
        ),
        (
            "Lucia Ferreira drank four espressos after dinner.",
            "Who could not sleep that night?",
            "Who drank four espressos after dinner?",
            "Lucia Ferreira",
        ),
        (
            "Matteo Galli parked on the tram tracks.",
            "Whose car was towed away?",
            "Who parked on the tram tracks?",
            "Matteo Galli",
        ),
        (
            "Hana Novak dropped her phone into the lake.",
            "Which character's device stopped working?",
            "Who dropped a phone into the lake?",
            "Hana Novak",
        ),
        (
            "Omar Farouk trained on the track every day for a year.",
            "Who became much fitter?",
            "Who trained on the track every day for a year?",
            "Omar Farouk",
        ),
        (
            "Linnea Berg forgot her keys inside the flat.",
            "Which character was locked out?",
            "Who forgot keys inside the flat?",
            "Linnea Berg",
        ),
        (
            "Arjun Shah planted an oak sapling in 1990.",
            "Whose garden now has a tall tree?",
            "Who planted an oak sapling in 1990?",
            "Arjun Shah",
        ),
        (
            "Zofia Mazur left milk out of the fridge over the weekend.",
            "Which character found something sour?",
            "Who left milk out of the fridge over the weekend?",
            "Zofia Mazur",
        ),
    ],
)

ASSOCIATIVE_NEEDLES: tuple[AssociativeNeedle, ...] = (*PLACES, *OBJECTS, *ROLES, *CAUSES)
"""48 needles, 12 of each kind."""
