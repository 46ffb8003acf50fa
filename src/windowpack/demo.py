"""A small corpus the project generates itself, for `windowpack demo` and for tests.

Field reports from fictional research stations, a markdown handbook and a radio-log
conversation, generated from a seed. Each corpus carries a few planted facts with the
question that should find them, so the demo (and its test) can show retrieval working.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from windowpack.documents import conversation_document
from windowpack.types import Document

STATIONS = ["Aurora", "Basalt Ridge", "Cinder Bay", "Driftwood", "Ember Flats", "Frostmere"]
_SUBJECTS = [
    "The weather mast",
    "The supply team",
    "The night crew",
    "The glaciology group",
    "The radio operator",
    "The field botanist",
    "The mechanic",
    "The station doctor",
]
_ACTIONS = [
    "logged steady winds from the north-west",
    "replaced a cracked solar panel on the east hut",
    "counted seabird nests along the southern cliffs",
    "recalibrated the snow-depth sensors",
    "reported a short outage of the satellite uplink",
    "took ice cores from the lower moraine",
    "inventoried the fuel drums in the cold store",
    "repaired the winch on the supply sled",
    "measured meltwater flow in the main channel",
    "noted unusual lichen growth near the boulder field",
]
_WHEN = ["in the morning", "before noon", "after the storm", "at dusk", "overnight", "on Tuesday"]


@dataclass(frozen=True, kw_only=True)
class PlantedFact:
    """A sentence hidden in the corpus and a question whose best answer is that sentence."""

    sentence: str
    question: str
    document_id: str


PLANTED = [
    PlantedFact(
        sentence="The backup generator at Aurora station is serviced every 47 days by Ines Moreau.",
        question="How often is the backup generator at Aurora serviced, and by whom?",
        document_id="reports/aurora.txt",
    ),
    PlantedFact(
        sentence="Cinder Bay's emergency beacon transmits on 406.025 MHz.",
        question="Which frequency does the Cinder Bay emergency beacon use?",
        document_id="reports/cinder-bay.txt",
    ),
]


def demo_documents(seed: int = 7, paragraphs_per_report: int = 6) -> list[Document]:
    """The demo corpus: one report per station, a handbook and a radio log."""
    rng = random.Random(seed)
    documents = [_report(station, rng, paragraphs_per_report) for station in STATIONS]
    documents.append(_handbook())
    documents.append(_radio_log(rng))
    return documents


def _report(station: str, rng: random.Random, paragraphs: int) -> Document:
    document_id = f"reports/{station.lower().replace(' ', '-')}.txt"
    blocks = [_paragraph(rng) for _ in range(paragraphs)]
    for fact in PLANTED:
        if fact.document_id == document_id:
            blocks.insert(rng.randrange(len(blocks) + 1), fact.sentence)
    return Document(
        text="\n\n".join(blocks),
        title=f"{station} station field report",
        id=document_id,
        metadata={"station": station},
    )


def _paragraph(rng: random.Random) -> str:
    sentences = [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_ACTIONS)} {rng.choice(_WHEN)}."
        for _ in range(rng.randint(3, 6))
    ]
    return " ".join(sentences)


def _handbook() -> Document:
    text = (
        "# Station handbook\n\n"
        "## Arrival\n\nEvery new arrival signs the logbook and collects cold-weather gear.\n\n"
        "## Radio discipline\n\nCall the base every evening at 19:00 with a status report. "
        "Keep transmissions short.\n\n"
        "## Fuel\n\nFuel drums are stored in the cold store and counted each week."
    )
    return Document(text=text, title="Station handbook", id="handbook.md", kind="markdown")


def _radio_log(rng: random.Random) -> Document:
    messages = []
    for day in range(1, 5):
        station = rng.choice(STATIONS)
        messages.append({"role": "user", "content": f"Day {day}: status report from {station}?"})
        messages.append(
            {"role": "assistant", "content": f"{station} reports all well. {_paragraph(rng)}"}
        )
    return conversation_document(messages, id="radio-log.json", title="Radio log")
