"""The aggregation task's material, written for windowpack: firms, cities and the many ways
a text says that a firm opened an office somewhere.

Every sentence names the firm and the city, and no two templates share their wording about
the office beyond that, so the question ("List every city where {firm} opened an office.")
finds each fact through the firm's name but no single phrase ranks them all alike. The firm
names are made up; the cities are real and spread over the world.
"""

from __future__ import annotations

FIRMS = (
    "Halvorsen & Pike",
    "Brightwater Instruments",
    "Kestrel Freight",
    "Marlowe Biotech",
    "Quillon Analytics",
    "Ostrander Textiles",
    "Vantrell Robotics",
    "Ebbesen Maritime",
    "Corvath Pharmaceuticals",
    "Lindqvist & Mbeki",
    "Tamsin Audio",
    "Farrowdale Insurance",
)

CITIES = (
    "Lisbon",
    "Osaka",
    "Nairobi",
    "Montreal",
    "Krakow",
    "Valparaiso",
    "Hanoi",
    "Tbilisi",
    "Adelaide",
    "Rotterdam",
    "Bogota",
    "Helsinki",
    "Marrakesh",
    "Chennai",
    "Winnipeg",
    "Ljubljana",
    "Accra",
    "Busan",
    "Porto Alegre",
    "Glasgow",
    "Tallinn",
    "Medellin",
    "Cebu",
    "Antwerp",
    "Kaunas",
    "Durban",
    "Kyoto",
    "Reykjavik",
    "Izmir",
    "Quito",
    "Bratislava",
    "Wellington",
)

# Each template states one office opening; `{firm}` and `{city}` are filled per fact.
TEMPLATES = (
    "{firm} opened an office in {city} that spring.",
    "In {city}, {firm} signed the lease on a new office.",
    "The first staff of {firm} in {city} started work in a rented room above a bakery.",
    "{firm} now has a branch in {city}, run by a team of six.",
    "Customers in {city} can visit {firm} at its new premises near the station.",
    "A small {firm} team moved into a converted warehouse in {city}.",
    "{firm} chose {city} for its next regional base.",
    "Last year {firm} set up shop in {city} as well.",
)

QUESTION = "List every city where {firm} opened an office."
