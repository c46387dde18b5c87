"""Prompts for extraction: a built-in set written for optaccept, or a file.

The built-in set mixes kinds of text a chat model is asked for (facts,
explanation, code, arithmetic, stories, poems, lists, translation, dialogue,
rewriting, advice), because the target/draft gap depends on how peaked the
next-token distribution is, and that depends on the kind of text.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from .._errors import InputError

__all__ = ["Prompt", "builtin_prompts", "extended_prompts", "load_prompts"]


@dataclasses.dataclass(frozen=True)
class Prompt:
    """One prompt: a stable id (recorded with extracted data), its kind and text.

    Attributes
    ----------
    id : str
        Stable identifier.
    text : str
        The prompt's text.
    kind : str
        What it asks for (``"fact"``, ``"code"``, …; ``"user"`` for prompts read from a file).
    """

    id: str
    text: str
    kind: str = "user"


_BUILTIN: tuple[tuple[str, str, str], ...] = (
    ("fact-capital", "fact", "What is the capital of Australia, and why was it chosen?"),
    ("fact-water", "fact", "At what temperature does water boil on top of a high mountain?"),
    ("fact-planets", "fact", "Name the planets of the solar system in order from the Sun."),
    ("fact-photosynthesis", "fact", "What gas do plants release during photosynthesis?"),
    ("explain-rainbow", "explain", "Explain to a ten-year-old why rainbows appear after rain."),
    ("explain-interest", "explain", "Explain compound interest in three sentences."),
    ("explain-vaccine", "explain", "How does a vaccine teach the immune system?"),
    ("explain-internet", "explain", "Briefly explain how an email travels across the internet."),
    ("code-reverse", "code", "Write a Python function that reverses a string."),
    ("code-fizzbuzz", "code", "Write FizzBuzz in Python for the numbers 1 to 20."),
    ("code-sql", "code", "Write an SQL query that counts orders per customer."),
    ("code-bug", "code", "Why does `for i in range(len(xs)): xs.remove(xs[i])` fail in Python?"),
    ("math-add", "math", "What is 347 plus 589? Show your working."),
    ("math-fraction", "math", "Simplify the fraction 42/56 and explain each step."),
    ("math-train", "math", "A train travels 120 km in 1.5 hours. What is its average speed?"),
    ("math-prime", "math", "Is 91 a prime number? Explain."),
    ("story-dragon", "story", "Write the opening of a story about a shy dragon who loves baking."),
    ("story-lighthouse", "story", "Continue the story: The lighthouse keeper found a letter that"),
    ("story-robot", "story", "Tell a very short story about a robot learning to paint."),
    ("poem-autumn", "poem", "Write a four-line poem about autumn leaves."),
    ("poem-sea", "poem", "Write a haiku about the sea at night."),
    ("list-breakfast", "list", "List five quick and healthy breakfast ideas."),
    ("list-packing", "list", "What should I pack for a weekend hiking trip?"),
    ("list-study", "list", "Give me four tips for studying for an exam."),
    ("translate-fr", "translate", "Translate into French: The weather is lovely today."),
    ("translate-es", "translate", "Translate into Spanish: Where is the train station?"),
    ("dialogue-shop", "dialogue", "Write a short dialogue between a customer and a baker."),
    ("dialogue-interview", "dialogue", "Give a good answer to the interview question: why this job?"),
    ("rewrite-formal", "rewrite", "Rewrite formally: hey, can't make it tmrw, sorry!!"),
    (
        "rewrite-summary",
        "rewrite",
        "Summarise in one sentence: The city council met on Tuesday "
        "to discuss new bicycle lanes, and after a long debate voted to build three of them.",
    ),
    ("advice-sleep", "advice", "How can I fall asleep faster?"),
    ("advice-plants", "advice", "My houseplant's leaves are turning yellow. What could be wrong?"),
    ("advice-email", "advice", "How do I politely decline a meeting invitation?"),
    ("define-entropy", "define", "Define entropy in one paragraph."),
    ("define-metaphor", "define", "What is a metaphor? Give two examples."),
    ("compare-cats-dogs", "compare", "Compare cats and dogs as pets in a few sentences."),
)


def builtin_prompts() -> list[Prompt]:
    """The built-in prompt set (36 prompts of 14 kinds, written for optaccept).

    Returns
    -------
    list of Prompt
        The prompts, in a fixed order.

    Examples
    --------
    >>> from optaccept import llm
    >>> prompts = llm.builtin_prompts()
    >>> len(prompts)
    36
    >>> prompts[0]
    Prompt(id='fact-capital', text='What is the capital of Australia, and why was it chosen?', kind='fact')
    """
    return [Prompt(id=i, text=t, kind=k) for i, k, t in _BUILTIN]


# The extended set: each kind asks one question of many subjects, so that a data set of
# many prompts spreads over the kinds as evenly as the built-in set does.  Every subject
# is a plain noun phrase or phrase that fits its template's sentence.
_BANK: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "fact",
        "What is {} known for? Answer in two sentences.",
        (
            "the Great Wall of China",
            "Marie Curie",
            "the Amazon river",
            "Mount Everest",
            "the Sahara",
            "Isaac Newton",
            "the city of Venice",
            "the Moon landing of 1969",
            "Ada Lovelace",
            "the Nile",
            "the Eiffel Tower",
            "Antarctica",
            "Leonardo da Vinci",
            "the Pacific Ocean",
            "Galileo Galilei",
            "the Roman Colosseum",
            "Charles Darwin",
            "the Dead Sea",
            "the printing press",
            "Iceland",
        ),
    ),
    (
        "explain",
        "Explain to a ten-year-old how {} works.",
        (
            "a rainbow",
            "a refrigerator",
            "an airplane wing",
            "a compass",
            "the heart",
            "a volcano",
            "a battery",
            "a microwave oven",
            "photosynthesis",
            "a bicycle gear",
            "the tide",
            "a camera",
            "a thermometer",
            "an echo",
            "a seed growing into a plant",
            "a lightning strike",
            "a submarine",
            "the seasons",
            "a lock and key",
            "a telescope",
        ),
    ),
    (
        "code",
        "Write a short Python function that {}.",
        (
            "checks whether a word is a palindrome",
            "returns the largest number in a list",
            "counts the vowels in a string",
            "computes the factorial of n",
            "merges two sorted lists",
            "removes duplicates from a list while keeping order",
            "converts Celsius to Fahrenheit",
            "returns the n-th Fibonacci number",
            "checks whether a year is a leap year",
            "flattens a list of lists",
            "counts how often each word occurs in a text",
            "reverses the words in a sentence",
            "tests whether a number is prime",
            "sums the digits of an integer",
            "finds the second smallest number in a list",
            "capitalises the first letter of every word",
            "computes the average of a list",
            "returns the common elements of two lists",
            "checks whether brackets are balanced",
            "converts a binary string to an integer",
        ),
    ),
    (
        "math",
        "Solve step by step: {}",
        (
            "What is 15% of 240?",
            "What is 123 times 4?",
            "How many minutes are there in 3.5 hours?",
            "What is the area of a rectangle 7 m by 12 m?",
            "What is 1000 minus 387?",
            "Simplify 18/24.",
            "What is the perimeter of a square with side 9 cm?",
            "A shirt costs 40 dollars and is 25% off. What is the new price?",
            "What is 2 to the power 10?",
            "Divide 144 by 12.",
            "What is the average of 4, 8 and 15?",
            "How many seconds are there in a day?",
            "What is 0.75 as a fraction?",
            "A car uses 6 litres per 100 km. How much for 250 km?",
            "What is 17 squared?",
            "Round 3.14159 to two decimal places.",
            "What is 5 factorial?",
            "If 3 apples cost 1.20 dollars, what do 10 apples cost?",
            "What is 81 divided by 9, plus 7?",
            "What is the sum of the angles of a triangle?",
        ),
    ),
    (
        "story",
        "Write the first paragraph of a story about {}.",
        (
            "a lost umbrella that finds its way home",
            "a girl who can talk to birds",
            "a bakery that only opens at midnight",
            "an astronaut who misses the rain",
            "a cat elected mayor of a small town",
            "a clock that runs backwards",
            "two rival gardeners",
            "a library book that was never returned",
            "a fox who wants to learn to swim",
            "the last tree in a city",
            "a robot that collects seashells",
            "a boy who finds a map in his cereal box",
            "a snowman in spring",
            "a ship in a bottle that comes to life",
            "a detective who is afraid of the dark",
            "a dragon who guards a bookshop",
            "a town where it never stops snowing",
            "an old violin with a secret",
            "a penguin on a train",
            "a kite that would not come down",
        ),
    ),
    (
        "poem",
        "Write a short poem about {}.",
        (
            "the first snow",
            "a quiet morning",
            "the city at night",
            "an old friend",
            "the ocean",
            "a thunderstorm",
            "the harvest moon",
            "a cup of tea",
            "mountains",
            "a summer garden",
            "the wind",
            "a candle",
            "the river",
            "a forgotten letter",
            "the stars",
            "a train journey",
            "falling leaves",
            "the desert",
            "a lighthouse",
            "birdsong",
        ),
    ),
    (
        "list",
        "List five {}.",
        (
            "tips for saving money",
            "ways to reduce stress",
            "fruits rich in vitamin C",
            "famous painters",
            "board games for families",
            "things to do on a rainy day",
            "ways to save water at home",
            "good habits for programmers",
            "countries in Africa",
            "animals that live in the Arctic",
            "easy vegetables to grow",
            "ideas for a birthday party",
            "reasons to learn a second language",
            "kitchen safety rules",
            "classic novels",
            "indoor exercises",
            "musical instruments",
            "ways to be more productive",
            "uses for baking soda",
            "questions to ask in a job interview",
        ),
    ),
    (
        "translate",
        "Translate into {}",
        (
            "French: I would like a cup of coffee, please.",
            "Spanish: My brother lives in a big city.",
            "German: The museum opens at nine o'clock.",
            "Italian: We are going to the beach tomorrow.",
            "French: Where can I buy a ticket?",
            "Spanish: The book is on the table.",
            "German: I have two cats and a dog.",
            "Italian: How much does this cost?",
            "French: It is raining in Paris.",
            "Spanish: Thank you for your help.",
            "German: Can you speak more slowly?",
            "Italian: The children are playing in the garden.",
            "French: My favourite colour is blue.",
            "Spanish: What time is it?",
            "German: The train is late again.",
            "Italian: I am learning to cook.",
            "French: See you next week.",
            "Spanish: The weather is cold today.",
            "German: I need a new pair of shoes.",
            "Portuguese: Good morning, how are you?",
        ),
    ),
    (
        "dialogue",
        "Write a short dialogue between {}.",
        (
            "a teacher and a student who forgot his homework",
            "a doctor and a nervous patient",
            "two friends planning a trip",
            "a waiter and a customer",
            "a librarian and a child",
            "a taxi driver and a tourist",
            "two neighbours about a noisy dog",
            "a coach and a tired athlete",
            "a shopkeeper and a customer returning a gift",
            "a grandmother and her grandson",
            "a pilot and an air traffic controller",
            "two scientists who disagree",
            "a baker and a delivery driver",
            "a new employee and a manager",
            "two children building a sandcastle",
            "a farmer and a city visitor",
            "a detective and a witness",
            "a chef and a food critic",
            "a hotel receptionist and a guest",
            "a musician and a fan",
        ),
    ),
    (
        "rewrite",
        "Rewrite the following to be {}",
        (
            "more polite: Give me the report now.",
            "formal: we gotta meet up soon about the thing.",
            "shorter: In my personal opinion, I think that it is probably going to rain later today.",
            "friendlier: Your request has been denied.",
            "simpler: The utilisation of the apparatus is prohibited.",
            "more exciting: The team won the game.",
            "clearer: The thing with the stuff is broken, fix it.",
            "formal: sorry i'm late, traffic was crazy.",
            "more positive: The food was not bad.",
            "shorter: Due to the fact that it was raining, we decided to stay inside.",
            "more polite: Stop talking during the film.",
            "simpler: The meeting has been postponed indefinitely.",
            "formal: thx for the gift, loved it!",
            "more vivid: The sun set over the hills.",
            "friendlier: Submit the form by Friday.",
            "clearer: It's the one next to the other one.",
            "more concise: At this point in time we are unable to help.",
            "more polite: Move your car.",
            "formal: can u send me the file asap",
            "more confident: I think maybe I could lead the project.",
        ),
    ),
    (
        "advice",
        "What advice would you give to someone who {}?",
        (
            "wants to start running",
            "is moving to a new city",
            "cannot stop procrastinating",
            "is starting a new job",
            "wants to learn to cook",
            "is afraid of public speaking",
            "wants to read more books",
            "has trouble waking up early",
            "is learning to play the guitar",
            "wants to save for a holiday",
            "has a job interview tomorrow",
            "wants to start a vegetable garden",
            "feels lonely after moving",
            "wants to drink less coffee",
            "is writing their first essay",
            "wants to adopt a dog",
            "spends too much time on their phone",
            "is travelling abroad for the first time",
            "wants to learn programming",
            "is preparing for a long hike",
        ),
    ),
    (
        "define",
        "Define {} in one short paragraph.",
        (
            "gravity",
            "democracy",
            "an algorithm",
            "inflation",
            "evolution",
            "a simile",
            "friction",
            "an ecosystem",
            "a noun",
            "electricity",
            "a recipe",
            "a hypothesis",
            "erosion",
            "irony",
            "a budget",
            "a vaccine",
            "climate",
            "a verb",
            "momentum",
            "a metaphor",
        ),
    ),
    (
        "compare",
        "Compare {} in a few sentences.",
        (
            "tea and coffee",
            "trains and planes for travel",
            "reading books and watching films",
            "summer and winter",
            "cities and villages",
            "email and letters",
            "bicycles and cars",
            "the sun and the moon",
            "oceans and lakes",
            "Python and JavaScript",
            "rain and snow",
            "paper books and e-books",
            "working from home and working in an office",
            "frogs and toads",
            "butter and olive oil",
            "chess and draughts",
            "violins and cellos",
            "apples and oranges",
            "mountains and beaches for a holiday",
            "walking and swimming as exercise",
        ),
    ),
)


def _slug(text: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in text.lower()).split()
    return "-".join(words[:6])


def extended_prompts() -> list[Prompt]:
    """The built-in prompts followed by 260 more written for optaccept (296 in all).

    Thirteen kinds (facts, explanations, code, arithmetic, stories, poems, lists,
    translation, dialogue, rewriting, advice, definitions, comparisons), twenty subjects
    each; ids ``<kind>-<subject words>`` are stable.  For data sets that need many prompts
    so that standard errors clustered by prompt are small (the decided tree table).

    Returns
    -------
    list of Prompt
        The prompts, the built-in ones first.
    """
    out = builtin_prompts()
    for kind, template, subjects in _BANK:
        for s in subjects:
            out.append(Prompt(id=f"x-{kind}-{_slug(s)}", text=template.format(s), kind=kind))
    return out


def load_prompts(path: str | os.PathLike) -> list[Prompt]:
    """Read prompts from a file.

    ``.jsonl``: one JSON object per line with ``"text"`` (and optional
    ``"id"``, ``"kind"``); otherwise one prompt per non-empty line, ids
    ``line-<number>``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    list of Prompt
        The prompts in file order.

    Raises
    ------
    InputError
        If the file is missing or unreadable, a ``.jsonl`` line lacks ``"text"``, it holds
        no prompt, or its ids repeat.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"prompts: {path} {'is a folder' if p.is_dir() else 'does not exist'}")
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"prompts: cannot read {path} as UTF-8 text ({type(exc).__name__})") from None
    out: list[Prompt] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if p.suffix == ".jsonl":
            try:
                obj = json.loads(line)
                text = obj["text"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise InputError(f"prompts: line {number} of {path} is not a JSON object with a 'text'") from None
            out.append(Prompt(str(obj.get("id", f"line-{number}")), str(text), str(obj.get("kind", "user"))))
        else:
            out.append(Prompt(f"line-{number}", line.strip()))
    if not out:
        raise InputError(f"prompts: file {path} holds no prompts")
    ids = [pr.id for pr in out]
    if len(set(ids)) != len(ids):
        raise InputError(f"prompts: ids in {path} are not unique")
    return out


def as_prompts(prompts: object) -> list[Prompt]:
    """Accept Prompt objects, strings, or a path to a prompt file."""
    if prompts is None:
        return builtin_prompts()
    if isinstance(prompts, (str, os.PathLike)) and Path(prompts).is_file():
        return load_prompts(prompts)
    if isinstance(prompts, str):
        raise InputError("prompts: a single string is ambiguous; pass a list of strings")
    try:
        items = list(prompts)  # type: ignore[call-overload]
    except TypeError:
        raise InputError("prompts: must be a list of prompts or a path to a file") from None
    out = []
    for i, pr in enumerate(items):
        if isinstance(pr, Prompt):
            out.append(pr)
        elif isinstance(pr, str):
            out.append(Prompt(f"prompt-{i}", pr))
        else:
            raise InputError(f"prompts: entry {i} is neither a Prompt nor a string")
    if not out:
        raise InputError("prompts: empty")
    ids = [pr.id for pr in out]
    if len(set(ids)) != len(ids):
        raise InputError("prompts: ids are not unique")
    return out
