"""Reading a design question: its words, alternatives, clauses, complexity, domain and implicit constraints.

The moderator's heuristic (``debatecode.agents.perspectives``) is built on
these, and so is ``vagueness``: whether a question is too vague to debate
before the moderator asks a clarifying question (seed 001). Text is compared as lower-case words: a term whose last word has four
or more characters is a stem and matches any word it starts, a shorter one
matches whole words only, and a term of several words matches them in a row.
Nothing here calls a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

__all__ = [
    "CONJUNCTIONS",
    "CONSTRAINTS",
    "DOMAINS",
    "YES_NO_LEADS",
    "Complexity",
    "Domain",
    "ImplicitConstraint",
    "as_words",
    "complexity_of",
    "count_clauses",
    "count_options",
    "domain_of",
    "find_constraints",
    "is_binary",
    "matches",
    "specific_words",
    "vagueness",
]

Complexity = Literal["low", "medium", "high"]
Domain = Literal["architecture", "data", "security", "performance", "ux", "operations", "process", "general"]


@dataclass(frozen=True)
class ImplicitConstraint:
    """A constraint a question implies, the phrases that reveal it, and the perspectives it weighs up."""

    name: str
    phrases: tuple[str, ...]
    weights: Mapping[str, int]
    """Perspective key → points added to its score."""


CONSTRAINTS: tuple[ImplicitConstraint, ...] = (
    ImplicitConstraint(
        "ship fast",
        ("ship fast", "ship quick", "ship soon", "move fast", "asap", "as soon as possible", "mvp", "prototype",
         "time to market", "proof of concept", "poc"),
        {"simplicity": 2, "delivery-speed": 2, "operational-simplicity": 1},
    ),
    ImplicitConstraint(
        "small team",
        ("small team", "tiny team", "solo", "one developer", "single developer", "two developers", "one engineer",
         "two engineers", "few engineers", "few developers", "just me", "limited staff", "side project"),
        {"simplicity": 2, "operational-simplicity": 2, "developer-experience": 1},
    ),
    ImplicitConstraint(
        "deadline",
        ("deadline", "due date", "by next week", "by friday", "this sprint", "this quarter", "end of the month",
         "launch date", "time pressure", "running out of time"),
        {"delivery-speed": 2, "simplicity": 1},
    ),
    ImplicitConstraint(
        "budget",
        ("budget", "cheap", "low cost", "limited funds", "cost sensitive", "expensive", "afford", "bootstrapped"),
        {"cost": 2, "operational-simplicity": 1},
    ),
    ImplicitConstraint(
        "compliance",
        ("complian", "regulat", "gdpr", "hipaa", "soc 2", "soc2", "pci", "audit", "data residency", "certification"),
        {"security": 2, "data-integrity": 1, "observability": 1},
    ),
    ImplicitConstraint(
        "legacy",
        ("legacy", "existing system", "existing code", "backward compat", "backwards compat", "old system",
         "brownfield", "without breaking"),
        {"test": 2, "data-integrity": 1, "future-flexibility": 1},
    ),
    ImplicitConstraint(
        "scale",
        ("at scale", "scale to", "millions of", "billions of", "high traffic", "rapid growth", "10x",
         "traffic spike", "large volume"),
        {"performance": 2, "reliability": 1, "cost": 1},
    ),
    ImplicitConstraint(
        "high availability",
        ("high availability", "highly available", "uptime", "24 7", "zero downtime", "no downtime", "always on",
         "sla", "mission critical"),
        {"reliability": 2, "operations": 2, "observability": 1},
    ),
    ImplicitConstraint(
        "sensitive data",
        ("sensitive data", "personal data", "pii", "health data", "medical", "financial data", "payment",
         "credit card"),
        {"security": 2, "data-integrity": 1},
    ),
)  # fmt: skip
"""Implicit constraints, detected from phrases the way keywords are matched."""

DOMAINS: dict[str, tuple[str, ...]] = {
    "architecture": ("architect", "service", "microservice", "monolith", "module", "api", "interface", "pattern",
                     "coupling", "plugin", "event", "layer", "component", "graphql", "rest", "grpc", "structure",
                     "maintain", "refactor", "depend", "simpl"),
    "data": ("data", "database", "db", "schema", "sql", "postgres", "mysql", "sqlite", "mongo", "nosql", "storage",
             "transaction", "consisten", "replica", "orm", "table", "record", "redis", "cach", "migrat"),
    "security": ("secur", "authn", "authz", "authent", "authoriz", "oauth", "login", "password", "secret", "token",
                 "encrypt", "permission", "vulnerab", "attack", "threat", "privacy", "pii", "gdpr", "complian"),
    "performance": ("perform", "latenc", "throughput", "faster", "slow", "speed", "optimi", "memory", "cpu",
                    "benchmark", "scal", "load", "concurren"),
    "ux": ("user", "ux", "ui", "frontend", "front end", "usab", "accessib", "onboard", "screen", "page", "form",
           "mobile", "customer", "dashboard", "cli"),
    "operations": ("deploy", "kubernetes", "k8s", "docker", "infra", "monitor", "incident", "on call", "rollout",
                   "rollback", "cloud", "server", "hosting", "backup", "upgrade", "observab", "logging", "alert"),
    "process": ("process", "team", "workflow", "code review", "branch", "release", "sprint", "testing", "test",
                "document", "convention", "hiring", "planning", "git", "pair", "ci", "roadmap"),
}  # fmt: skip
"""Stems per question domain, in tie-break order."""

CONJUNCTIONS = ("and", "but", "while", "although", "because", "given", "without", "whereas", "unless", "so that")
YES_NO_LEADS = ("should", "shall", "do", "does", "is", "are", "can", "could", "must", "would", "will", "was", "has")


def as_words(text: str) -> str:
    """``text`` as lower-case words between single spaces, padded with a space at both ends."""
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "


def matches(term: str, text: str) -> bool:
    """Whether ``term`` occurs in ``text`` (from ``as_words``): its last word as a stem when 4+ characters long, else whole."""
    needle = as_words(term)
    if needle.isspace():
        return False
    last = needle.split()[-1]
    return (needle.rstrip() if len(last) >= 4 else needle) in text


def count_options(question: str) -> int:
    """How many alternatives the question names: 1, 2 for "X or Y", more for "A, B or C"."""
    best = 1
    for sentence in re.split(r"[.?!;]", question.lower()):
        separators = re.findall(r"\b(?:or|vs|versus)\b", sentence)
        if not separators:
            continue
        before = re.split(r"\b(?:or|vs|versus)\b", sentence, maxsplit=1)[0]
        listed = 0
        segments = before.split(",")[1:]
        if segments and not segments[-1].strip():
            segments.pop()  # "A, B, or C"
        for segment in reversed(segments):
            if not 0 < len(segment.split()) <= 3:
                break
            listed += 1
        best = max(best, 1 + len(separators) + listed)
    return best


def count_clauses(question: str) -> int:
    """Sentences and clauses: parts between punctuation and conjunctions ("and", "but", "given"...)."""
    parts = re.split(r"[.?!;,]|\b(?:" + "|".join(CONJUNCTIONS) + r")\b", question.lower())
    return sum(1 for part in parts if part.strip())


def complexity_of(question: str, options: int, constraints: int) -> Complexity:
    """A point each for 20+ words, 45+ words, 3+ options, 4+ clauses and 2+ constraints: 0 low, 1-2 medium, 3+ high."""
    words = len(question.split())
    points = sum((words >= 20, words >= 45, options >= 3, count_clauses(question) >= 4, constraints >= 2))
    return "low" if points == 0 else "medium" if points <= 2 else "high"


def is_binary(question: str, options: int) -> bool:
    """Two alternatives ("X or Y"), or a yes/no question ("Should we ...?") naming no alternatives."""
    if options == 2:
        return True
    first = question.strip().lower().split(maxsplit=1)
    return options == 1 and bool(first) and first[0] in YES_NO_LEADS


def domain_of(text: str) -> Domain:
    """The domain whose ``DOMAINS`` stems match ``text`` most often (the earlier one on ties), else ``general``."""
    hits = {domain: sum(matches(stem, text) for stem in stems) for domain, stems in DOMAINS.items()}
    best = max(hits, key=lambda domain: hits[domain])
    return cast(Domain, best) if hits[best] else "general"


def find_constraints(text: str, explicit: Sequence[str]) -> tuple[list[ImplicitConstraint], list[str]]:
    """Constraints found in ``text`` (as words) or named in ``explicit``, and the explicit ones none of them matches."""
    named = {item.strip().lower() for item in explicit}
    found = [c for c in CONSTRAINTS if c.name in named or any(matches(p, text) for p in c.phrases)]
    unmatched = [
        item.strip()
        for item in explicit
        if item.strip()
        and not any(c.name == item.strip().lower() or any(matches(p, as_words(item)) for p in c.phrases) for c in found)
    ]
    return found, list(dict.fromkeys(unmatched))


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FILLER_WORDS = _word_set(
    "a an the and or but of to in on at for by with from as about into over under than then so if is are was were be "
    "been being am do does did done doing have has had can could should shall would will must may might we our us i "
    "me my you your they them their he she his her what which who whom whose when where why how whether there here "
    "not no yes any some all each every more most less least very just also too only really please tell let know "
    "think want need"
)
"""Words that carry no subject: articles, pronouns, auxiliaries, question words."""

GENERIC_WORDS = _word_set(
    "it this that these those thing things stuff something anything everything way ways approach approaches "
    "solution solutions problem problems issue issues option options choice choices decision decisions idea ideas "
    "plan plans make made use used using handle handled fix fixed change changes improve improved improving better "
    "best good bad right wrong work works working go going get getting do doing system systems project projects "
    "app apps application code now next new old future done"
)
"""Words that name no concrete subject on their own ("improve", "the system", "this")."""

_REFERENCES = frozenset({"it", "this", "that", "these", "those", "them"})


def specific_words(question: str) -> list[str]:
    """The words of ``question`` that name something concrete: neither filler nor generic, two letters or more."""
    words = as_words(question).split()
    return [w for w in words if len(w) >= 2 and w not in _FILLER_WORDS and w not in GENERIC_WORDS]


def vagueness(question: str, *, has_context: bool = False) -> list[str]:
    """Why ``question`` is too vague to debate as it stands, one reason per line; empty when it is not.

    A question is vague when it names nothing concrete ("How do we make it better?"); when it is
    short, names no alternatives and touches no known domain ("What about lunch?"); or when it
    points at "this" or "it" without context files to say what that is ("Should we do this?").
    """
    specific = specific_words(question)
    words = as_words(question).split()
    reasons: list[str] = []
    if not specific:
        reasons.append("it names nothing concrete to decide about")
    elif len(specific) < 3 and count_options(question) < 2 and domain_of(as_words(question)) == "general":
        reasons.append("it is short, names no alternatives and touches no known area (architecture, data, security...)")
    referring = sorted(_REFERENCES & set(words))
    if referring and not has_context and len(specific) < 4:
        reasons.append(f"it refers to {', '.join(repr(w) for w in referring)} without saying what (no context files)")
    return reasons
