"""Review: reviewers score the leading candidate against the task and its test results.

Reviewers speak in order, domain roles first and cross-cutting ones last
(observability → operations → test → security), each seeing the reviews
before it and the candidate's test results. A candidate that fails a visible
test scores at most ``review.failing_cap``, whatever the reviewer says. Each
gives a satisfaction score (0-100), a rationale, blocking concerns and
suggestions; a rubber-stamp reply ("looks good") is rejected and asked again
once. When a reviewer is below the target with concerns, the leader's author
revises (kept only if no test regresses). A Contrarian below target is
recorded as a dissent.
"""

from __future__ import annotations

from debatecode.agents.agent import Agent
from debatecode.errors import ModelError
from debatecode.llm.tokens import context_window
from debatecode.protocol.ordering import CROSS_CUTTING
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.replies import parse_review
from debatecode.protocol.run import DebateRun
from debatecode.protocol.separation import separated_by_tests
from debatecode.protocol.settings import ReviewSettings
from debatecode.protocol.state import Candidate, Dissent, ReviewItem
from debatecode.protocol.transcript import ContextWindow

__all__ = ["ReviewPhase", "grounded_satisfaction", "review_history"]

_NEUTRAL = 50


def review_history(run: DebateRun, round_no: int, settings: ReviewSettings, reply_max_tokens: int) -> str:
    """Earlier reviews as prompt context: rounds 1-3 verbatim, then the last 2 plus a summary, then the last 1.

    ``reply_max_tokens`` is kept free of the smallest reviewing model's window for its reply.
    """
    rounds: dict[int, list[tuple[str, str, str, int | None]]] = {}
    for item in run.state.reviews:
        if item.round < round_no:
            text = item.summary + (
                "\nBlocking concerns:\n" + "\n".join(f"- {c}" for c in item.concerns) if item.concerns else ""
            )
            rounds.setdefault(item.round, []).append((item.reviewer, item.role, text, item.satisfaction))
    if not rounds:
        return ""
    # Counted for the reviewing model with the smallest window (the history goes to every reviewer),
    # leaving room for its reply; unknown windows (scripted models) keep the round-based window only.
    reviewing = [a.model for a in run.agents if a.role.name in settings.reviewers]
    windows = {m: w for m in reviewing if (w := context_window(m)) is not None}
    model = min(windows, key=windows.__getitem__, default=None)
    window = ContextWindow(
        [rounds.get(n, []) for n in range(1, round_no)],
        target=settings.satisfaction_target,
        model=model,
        token_limit=max(1, windows[model] - reply_max_tokens) if model is not None else None,
    )
    return window.build(round_no).render()


def grounded_satisfaction(given: int, candidate: Candidate, cap: int) -> int:
    """A reviewer's score, lowered to ``cap`` when the candidate fails a visible test: execution outranks opinion."""
    if candidate.code is None or not candidate.all_visible_pass():
        return min(given, cap)
    return given


class ReviewPhase(Phase):
    name = "review"

    def __init__(
        self, settings: ReviewSettings | None = None, *, tolerate_failures: bool = True, reply_max_tokens: int = 1024
    ) -> None:
        self.settings = settings or ReviewSettings()
        self.tolerate_failures = tolerate_failures
        """``participants.tolerate_failures``: a reviewer whose model fails is dropped instead of failing the session."""
        self.reply_max_tokens = reply_max_tokens
        """``llm.max_tokens``: room left for a reviewer's reply when earlier reviews are fitted to its window."""

    def reviewers(self, run: DebateRun, round_no: int) -> list[Agent]:
        wanted = self.settings.reviewers
        agents = [a for a in run.agents if a.role.name in wanted]
        ordering = run.deps.ordering
        if ordering is None:
            return sorted(
                agents,
                key=lambda a: (
                    a.role.cross_cutting,
                    CROSS_CUTTING.index(a.role.concern) if a.role.cross_cutting else wanted.index(a.role.name),
                ),
            )
        order = [agent_id for agent_id in ordering.order(round_no) if any(a.id == agent_id for a in agents)]
        return [run.agent(agent_id) for agent_id in order]

    async def execute(self, run: DebateRun, round_no: int) -> str:
        leader = run.leader()
        if leader is None:
            return "no candidate to review"
        if self.settings.when == "tied":
            separated = separated_by_tests(run.ranking(), same_code=False)
            if separated is not None:
                return f"skipped: {separated} (review.when = tied)"
        reviews: list[ReviewItem] = []
        for reviewer in self.reviewers(run, round_no):
            try:
                reviews.append(await self._review(run, reviewer, leader, round_no, reviews))
            except ModelError as exc:
                if not self.tolerate_failures:
                    raise
                run.drop_agent(reviewer.id, f"{type(exc).__name__}: {exc}")
        scores = {item.reviewer: item.satisfaction for item in reviews}
        tracker = run.deps.satisfaction
        if tracker is not None and scores:
            tracker.record(round_no, scores)
        target = self.settings.satisfaction_target
        unhappy = [item for item in reviews if item.satisfaction < target and (item.concerns or item.summary)]
        revised = ""
        if unhappy and self.settings.revise:
            author = run.agent(leader.agent_id)
            candidate = await self._address(run, author, leader, unhappy, round_no)
            revised = f"; {author.id} revised ({candidate.report.passed}/{candidate.report.total}, {'adopted' if run.state.adopt(candidate) else 'kept previous'})"
        shown = ", ".join(f"{k} {v}" for k, v in scores.items())
        return f"reviewed {leader.agent_id}: {shown}{revised}"

    async def _review(
        self, run: DebateRun, reviewer: Agent, leader: Candidate, round_no: int, earlier: list[ReviewItem]
    ) -> ReviewItem:
        this_round = "\n".join(f"{item.reviewer} ({item.satisfaction}): {item.summary[:300]}" for item in earlier)
        history = "\n".join(
            part for part in (review_history(run, round_no, self.settings, self.reply_max_tokens), this_round) if part
        )
        prompt = reviewer.prompt(
            "review",
            run.task,
            author=leader.agent_id,
            code=leader.code,
            report=leader.report,
            quality=run.state.quality_summary(leader),
            previous_reviews=history,
            **run.context(),
        )
        turn = await run.ask(reviewer, prompt, phase=self.name, round_no=round_no, kind="review", needs_reasoning=True)
        review = parse_review(prompt.full_reply(turn.content))
        given = review.satisfaction if review.satisfaction is not None else _NEUTRAL
        satisfaction = grounded_satisfaction(given, leader, self.settings.failing_cap)
        item = ReviewItem(
            round=round_no,
            reviewer=reviewer.id,
            role=reviewer.role.name,
            target=leader.agent_id,
            satisfaction=satisfaction,
            scored=review.satisfaction is not None,
            concerns=review.concerns,
            summary=review.summary or turn.content.strip()[:500],
        )
        grounding = {"reviewer_score": given} if satisfaction != given else {}
        await run.record(
            turn.model_copy(
                update={
                    "confidence": satisfaction / 100,
                    "metadata": {**turn.metadata, "review": item.model_dump(), **grounding},
                }
            )
        )
        run.state.reviews.append(item)
        if reviewer.role.name == "contrarian" and satisfaction < self.settings.satisfaction_target:
            run.state.dissents.append(
                Dissent(role="contrarian", agent=reviewer.id, phase=self.name, text=item.summary[:500])
            )
        if reviewer.role.name == "security":
            for concern in review.concerns:
                run.state.add_risk(reviewer.id, concern)
        return item

    async def _address(
        self, run: DebateRun, author: Agent, leader: Candidate, unhappy: list[ReviewItem], round_no: int
    ) -> Candidate:
        prompt = author.prompt(
            "address_review",
            run.task,
            len(run.authors()),
            code=leader.code,
            report=leader.report,
            reviews=unhappy,
            **run.context(author.id),
        )
        turn = await run.ask(author, prompt, phase=self.name, round_no=round_no, kind="address_review", want_code=True)
        return await run.evaluate(author, turn)
