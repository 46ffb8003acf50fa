"""The word lists and few-shot preamble of the GDM-MRCR-v2-shaped conversations.

This project's own: formats, topics and styles for `Write a {format} about {topic} in
{style} style.` requests, and a preamble of two worked examples (invented texts), as v2
opens every transcript with some.
"""

from __future__ import annotations

# Every format and style starts with a consonant, so "a {format}" and "in a {style} style"
# read right, as v2's fixed templates assume.
FORMATS = (
    "poem",
    "haiku",
    "limerick",
    "riddle",
    "sonnet",
    "short story",
    "song",
    "speech",
    "letter",
    "diary entry",
    "blog post",
    "tweet",
    "news report",
    "product review",
    "toast",
    "dialogue",
    "fable",
    "recipe",
    "ballad",
    "postcard",
)
TOPICS = (
    "tapirs",
    "saffron",
    "lighthouses",
    "glaciers",
    "origami",
    "beekeeping",
    "comets",
    "sourdough bread",
    "lichen",
    "tide pools",
    "clockmaking",
    "jellyfish",
    "the Silk Road",
    "volcanoes",
    "typewriters",
    "carnivorous plants",
    "sea otters",
    "chess openings",
    "paper kites",
    "moss gardens",
    "fireflies",
    "cartography",
    "hot air balloons",
    "lentils",
    "night trains",
    "marmalade",
    "bicycles",
    "coral reefs",
    "thunderstorms",
    "pocket watches",
    "salt marshes",
    "hedgehogs",
    "stained glass",
    "monsoons",
    "wool sweaters",
    "radio telescopes",
    "figs",
    "canal boats",
    "penguins",
    "library cards",
)
STYLES = (
    "pirate",
    "Shakespearean",
    "noir",
    "cowboy",
    "bureaucratic",
    "professorial",
    "sarcastic",
    "cheerful",
    "gloomy",
    "royal",
    "surfer",
    "Victorian",
    "minimalist",
    "sports commentator",
    "fairy tale",
    "telegraph",
    "pompous",
    "nervous",
    "jazz",
    "robotic",
)

_FEW_SHOT_POEM = (
    "Rain on the tin roof counts the hours for me,\n"
    "each drop a clerk who never learned to rest.\n"
    "The gutter hums its one unfinished song,\n"
    "and puddles keep the sky they like the best."
)
_FEW_SHOT_NOTES = (
    "Dear team, the kettle in the third-floor kitchen has been replaced, and the new one "
    "switches itself off. Please stop propping the lid open with a spoon. Thank you.",
    "Dear team, a reminder that the new kettle needs no spoon. It boils, it clicks, it "
    "stops. The spoon drawer has been moved out of reach for everyone's sake.",
)
FEW_SHOT = (
    "Here are some examples of conversations followed by a question about them, answered "
    "correctly:\n\n"
    "==== EXAMPLE 1 ====\n\n"
    f"User: Write a poem about rainwater in a quiet style.\n\nAssistant: {_FEW_SHOT_POEM}\n\n"
    "User: Write a memo about spoons in a stern style.\n\n"
    "Assistant: Spoons belong in the drawer, not in the kettle.\n\n"
    "User: Prepend Qw3rTy7uIo9P to the first poem about rainwater in a quiet style. "
    "Do not include any other text in your response.\n\n"
    f"Assistant: Qw3rTy7uIo9P {_FEW_SHOT_POEM}\n\n"
    "==== END EXAMPLE 1 ====\n\n"
    "==== EXAMPLE 2 ====\n\n"
    f"User: Write a memo about kettles in a polite style.\n\nAssistant: {_FEW_SHOT_NOTES[0]}\n\n"
    f"User: Write a memo about kettles in a polite style.\n\nAssistant: {_FEW_SHOT_NOTES[1]}\n\n"
    "User: Prepend Zx8cVb2nMa5S to the second memo about kettles in a polite style. "
    "Do not include any other text in your response.\n\n"
    f"Assistant: Zx8cVb2nMa5S {_FEW_SHOT_NOTES[1]}\n\n"
    "==== END EXAMPLE 2 ===="
)
