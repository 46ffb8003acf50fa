"""Tests for telling set questions (every member, or a count) from questions after one thing."""

from __future__ import annotations

import pytest

from windowpack.search import is_set_question

# Each rule of the module's docstring is reached by several questions, from manuals, chats,
# finance, biology and code.
SET_QUESTIONS = [
    # (i) counting
    "How many invoices did Ardent Ltd issue in March?",
    "How much did the team spend on travel in total?",
    "What is the number of open pull requests?",
    "Give the total number of patients enrolled.",
    "Count the lines that contain a warning.",
    # (ii) a universal scoping the answer
    "What does each option in the config file control?",
    "Does every endpoint require an API key?",
    "Where did everyone in the chat say they would travel?",
    "What did the reviewers say about each chapter?",
    "Everything the manual says about calibration?",
    "Who all signed the petition?",
    "Has any of the nodes reported a disk failure?",
    # (iii) enumeration and fetching imperatives
    "List every flag that the deploy command accepts.",
    "Name all the people who joined the call on Monday.",
    "Give me the functions that raise a TimeoutError.",
    "Tell me every place where Dana mentioned the launch.",
    "Enumerate the steps of glycolysis.",
    "Can you list the modules that import numpy?",
    "Please name the three species found in the sample.",
    "Show me all the transactions above 500 euros.",
    "Could you itemize the charges on my last bill?",
    "Find the accounts that were closed last year.",
    "Give me a list of the vendors we paid in June.",
    # (iv) a plural wh-phrase
    "Which enzymes are inhibited by the compound?",
    "What are the side effects of the new dosage?",
    "In which countries does the bank hold reserves?",
    "Who are the shareholders of Corwin Holdings?",
    "Which files did the last commit touch?",
    "What companies supply parts to the factory?",
    "What were the main findings of the audit?",
    "Which of the tests are failing on Windows?",
    "Are there any known issues with the importer?",
    "Which genes does the transcription factor regulate?",
    "What kinds of errors can the parser report?",
    "Which APIs were deprecated in version 3?",
    "Who were the speakers at the conference?",
    "The auditors flagged problems in which subsidiaries?",
    "I'd like to know which suppliers missed the deadline.",
    "Which team members attended the offsite?",
    "Show me which branches were merged yesterday.",
    "What other tools does the installer download?",
]

SINGLE_QUESTIONS = [
    "Which office did the auditor visit first?",
    "Who approved the budget for the new lab?",
    "What is the default port of the admin console?",
    "What does the --dry-run option do?",
    "What does the ALL flag do?",
    'What does the "every" keyword mean in the cron syntax?',
    "How does the garbage collector reclaim memory?",
    "Where is the backup archive stored?",
    "Where does the function write its logs?",
    "When did the merger close?",
    "Why did the build fail?",
    "Which employee has the keys to the server room?",
    "Which team won the final?",
    "Which protein binds to the receptor?",
    "Which branch merges into main?",
    "Which user last edited the wiki page?",
    "Which gene is mutated in the patient?",
    "Which analysis gave the lowest error?",
    "Which character in the story has visited Lisbon?",
    "Which of the two plans is cheaper?",
    "What is the third item on the agenda?",
    "What is the 4th chapter about whales?",
    "What causes the error in the login form?",
    "What happens when the queue is full?",
    "What time does the pharmacy open?",
    "What is the name of the CFO?",
    "What was the closing price of the stock on Friday?",
    "What is the status of the shipment?",
    "What are you working on?",
    "Whose cheque bounced at the bank?",
    "Is the cache invalidated on restart?",
    "Does the contract allow early termination?",
    "How long does the battery last?",
    "How do I reset my password?",
    "How much does the premium plan cost?",
    "Can you explain how the scheduler picks a worker?",
    "Tell me about the refund policy.",
    "Show me the log file for yesterday's run.",
    "Name the treasurer of the chess club.",
    "List comprehension syntax in Python?",
    # Both ... and names a pair, not a set.
    "Who owns both the boat and the trailer?",
    # A universal that quantifies a time, or the object of a one-subject question.
    "Who walks the dog every evening?",
    "Who kept the lights on all night?",
    "Which engineer reviews pull requests each morning?",
    "Is it safe to leave the heater running all day?",
    "Who trains at the gym every single day?",
    "Who has been to every museum in Oslo?",
    "Who replied to everyone's message first?",
    "Was the migration finished at all?",
    "Does the bot post a summary every other week?",
]


@pytest.mark.parametrize("question", SET_QUESTIONS)
def test_a_question_after_every_member_or_a_count_is_a_set_question(question: str) -> None:
    assert is_set_question(question) is True


@pytest.mark.parametrize("question", SINGLE_QUESTIONS)
def test_a_question_after_one_thing_is_not_a_set_question(question: str) -> None:
    assert is_set_question(question) is False


def test_the_lists_are_large_and_disjoint() -> None:
    assert len(set(SET_QUESTIONS)) == len(SET_QUESTIONS) >= 25
    assert len(set(SINGLE_QUESTIONS)) == len(SINGLE_QUESTIONS) >= 25
    assert not set(SET_QUESTIONS) & set(SINGLE_QUESTIONS)


@pytest.mark.parametrize(
    ("singular", "plural"),
    [
        ("Which city hosts the summit?", "Which cities host the summit?"),
        ("Which file did the patch change?", "Which files did the patch change?"),
        ("What is the main risk of the loan?", "What are the main risks of the loan?"),
        ("Name the founder of the studio.", "Name the founders of the studio."),
        ("Which reviewer signed the spec?", "Which reviewers signed the spec?"),
    ],
)
def test_the_number_of_the_thing_asked_decides(singular: str, plural: str) -> None:
    assert is_set_question(singular) is False
    assert is_set_question(plural) is True


@pytest.mark.parametrize(
    "question",
    [
        "HOW MANY ORDERS SHIPPED LATE?",
        "how many orders shipped late",
        "What\u2019re the fees for a wire transfer?",  # a curly apostrophe
        "Hey, can you please list the open incidents?",
        "Do you know which regions the outage affected?",
    ],
)
def test_case_contractions_and_lead_ins_do_not_hide_the_form(question: str) -> None:
    assert is_set_question(question) is True


@pytest.mark.parametrize("question", ["", "?", "   ", "Thanks!"])
def test_an_empty_or_questionless_text_is_not_a_set_question(question: str) -> None:
    assert is_set_question(question) is False
