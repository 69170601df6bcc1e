"""Request and response bodies of the REST API (``/v1``), as published in its OpenAPI spec."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from debatecode.protocol.settings import PhaseName

__all__ = [
    "ERROR_RESPONSES",
    "ApiError",
    "CheckpointRequest",
    "CheckpointResponse",
    "DebateRequest",
    "EscalationOption",
    "EscalationRequest",
    "EscalationView",
    "GateDecisionRequest",
    "Health",
    "SessionDetail",
    "SessionSummary",
    "SolveRequest",
    "Started",
]


class _Body(BaseModel):
    """A request body: unknown fields and loosely typed values (``0`` for ``false``) are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)


class ApiError(BaseModel):
    """Every 4xx/5xx answer: the same message the CLI prints, and the exit code it would exit with."""

    error: str
    """The kind of error: ``ConfigError``, ``TaskError``, ``SessionNotFound``, ``Conflict``..."""
    message: str
    exit_code: int | None = None


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ApiError, "description": "The body is not JSON."},
    401: {"model": ApiError, "description": "The server has a token and the request did not carry it."},
    404: {"model": ApiError, "description": "No such session (or gate, or code version)."},
    409: {"model": ApiError, "description": "The session is not in a state this request fits."},
    422: {"model": ApiError, "description": "Bad input: the CLI's message, with its exit code 2."},
    503: {"model": ApiError, "description": "The model, sandbox or store cannot be reached."},
}
"""The error answers every ``/v1`` route may give, documented in the OpenAPI spec."""


class SolveRequest(_Body):
    """Start a code debate: a task file's text (or a path the server can read), and settings on top of its config."""

    task: str | None = Field(default=None, max_length=1_000_000)
    """The task in the task-file format (markdown with ``## Tests``), as text."""
    task_path: str | None = None
    """Or the path of a task file under the server's working folder (relative, or absolute inside it)."""
    overrides: dict[str, Any] = Field(default_factory=dict)
    """Settings as in ``solve(**overrides)``: ``{"agents": 2, "phases.critique": false}``. ``store_url``, ``out`` and
    ``sandbox.backend = "unsafe-host"`` are the server's to choose and are refused."""
    checkpoints: bool = False
    """Wait at each round's end for ``POST .../checkpoint`` (continue, guide or end)."""
    gates: list[PhaseName] = Field(default_factory=list)
    """Phases after which the session waits for ``POST .../gates/approve`` or ``.../reject``."""

    @model_validator(mode="after")
    def _one_task(self) -> SolveRequest:
        if (self.task is None) == (self.task_path is None):
            raise ValueError("give exactly one of task (the task text) or task_path")
        return self


class DebateRequest(_Body):
    """Start a design debate on a question; it ends in a decision record (ADR)."""

    question: str = Field(min_length=1, max_length=100_000)
    overrides: dict[str, Any] = Field(default_factory=dict)
    """Settings as for ``SolveRequest``, e.g. ``{"design.max_rounds": 3}``."""
    checkpoints: bool = False
    """Wait at each round's end for ``POST .../checkpoint``, and at an escalation for ``POST .../escalation``
    (the choice of option A, B or C); without it an escalated debate's record says nobody decided."""
    gates: list[str] = Field(default_factory=list, max_length=0)
    """Must be empty: a design debate has no approval gates (its human steps in at checkpoints and escalations)."""

    @field_validator("gates", mode="before")
    @classmethod
    def _no_gates(cls, value: Any) -> Any:
        if value:
            raise ValueError(
                "a design debate has no approval gates (they follow code-debate phases); "
                "start it with checkpoints: true to steer it after each round and choose at an escalation"
            )
        return value


class Started(BaseModel):
    """A session the server started."""

    id: str
    kind: Literal["code", "design"]
    status: str
    events: str
    """Where its events stream (SSE)."""
    dashboard: str
    """Its live page in the dashboard."""


class SessionSummary(BaseModel):
    """One line of the session list."""

    id: str
    kind: str
    status: str
    title: str
    model: str
    created_at: datetime
    completed_at: datetime | None
    duration_s: float
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    tests_passed: int | None = None
    tests_total: int | None = None
    live: bool = False
    """Run by this server and still going."""


class SessionDetail(SessionSummary):
    """A session with what a client can act on."""

    topic: str
    error: str | None
    outcome: dict[str, Any]
    out_dir: str
    branch: str
    total_rounds: int
    waiting_checkpoint: int | None = None
    """The round whose checkpoint waits for ``POST .../checkpoint`` (sessions run by this server)."""
    pending_gates: list[str] = Field(default_factory=list)
    """Ids of gates waiting for a decision."""
    waiting_escalation: bool = False
    """An escalated design debate of this server waits for ``POST .../escalation``."""


class GateDecisionRequest(_Body):
    comment: str = Field(default="", max_length=10_000)
    reviewer: str = Field(default="web", max_length=200)
    gate_id: str | None = None
    """Which gate; default the one pending gate of the session."""


class CheckpointRequest(_Body):
    action: Literal["continue", "guide", "end"]
    guidance: str | None = Field(default=None, max_length=10_000)
    """With ``guide``: the text every later prompt shows."""

    @model_validator(mode="after")
    def _guidance_with_guide(self) -> CheckpointRequest:
        if self.action == "guide" and not (self.guidance or "").strip():
            raise ValueError("action guide needs guidance text")
        return self


class CheckpointResponse(BaseModel):
    round: int
    action: str


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    store: str
    running: int
    """Sessions this server is running now."""


class EscalationOption(BaseModel):
    label: str
    """``A``, ``B``, ``C``..."""
    text: str


class EscalationRequest(_Body):
    """The option chosen at an escalated design debate."""

    choice: str = Field(min_length=1, max_length=8)
    """The label of an offered option (``A``, ``B``, ``C``...; any case)."""
    guidance: str | None = Field(default=None, max_length=10_000)
    """What the decision record should say about the choice."""


class EscalationView(BaseModel):
    """A design debate's escalation: the question put to the human and, once given, the answer."""

    status: Literal["none", "waiting", "decided", "undecided"]
    """``none``: it did not escalate; ``waiting``: a choice is awaited now; ``decided``: a human chose;
    ``undecided``: nobody chose (no human, or none in time)."""
    reason: str = ""
    summary: str = ""
    options: list[EscalationOption] = Field(default_factory=list)
    positions: dict[str, str] = Field(default_factory=dict)
    """Each perspective's last stance, by display name."""
    choice: str | None = None
    text: str = ""
    """The chosen option's text."""
    guidance: str | None = None
    decided_by: Literal["human", "nobody"] | None = None
