"""A user's provider misbehaves: rate limits and 5xx are retried through, and a provider that stays down is resumed.

`debatecode solve --model openai/...` talks to a local OpenAI-compatible
provider (a process of its own, ``llm.api_base`` in ``debatecode.toml``):

1. it answers 429 with ``Retry-After: 1`` and 503 twice before it answers:
   the solve completes, the waits honour Retry-After, and the stored tokens
   are those of the answers alone;
2. it answers the three authors' drafts and then stays down: the solve exits
   3 with a ``--resume`` hint and the session is stored as failed, with the
   drafts; once the provider is back, ``--resume`` completes it, asking only
   for the turns that are missing, and each answer's tokens count once.
"""

from __future__ import annotations

import re

from challenges._harness import REPO, Journey, expect, write_config
from challenges._provider import ADD_REPLY, API_KEY_ENV, MODEL, FakeProvider
from challenges._sessions import RESUME_HINT, model_turns, session_id_in, shown

NEEDS_DOCKER = True
ADD = str(REPO / "examples" / "tasks" / "add.md")
PROMPT_TOKENS, COMPLETION_TOKENS = 11, 7
"""What the fake provider's usage block reports for every answer."""
RETRY = re.compile(r"model \S+: (.+?) \(attempt (\d+) of (\d+)\); retrying in ([\d.]+)s")


def _solve(*extra: str, out: str) -> list[str]:
    return ["solve", ADD, "--model", MODEL, "--sandbox", "docker", "--no-checkpoints", "--out", out, *extra]


def _flaky(journey: Journey, provider: FakeProvider) -> str:
    provider.enqueue("429/1", "503", "503")
    solved = journey.cli(*_solve(out="out-flaky"), env=API_KEY_ENV)
    output = solved.stdout + solved.stderr
    expect(solved.returncode in (0, 1), f"solve through faults exited {solved.returncode}", output)
    requests = provider.requests()
    faults = [r["status"] for r in requests if r["kind"] != "answer"]
    expect(faults == [429, 503, 503], f"the provider saw faults {faults}, wanted [429, 503, 503]")
    retries = RETRY.findall(" ".join(output.split()))
    expect(len(retries) == 3, f"{len(retries)} retries logged for 3 faults", output)
    waits = sorted(float(wait) for *_, wait in retries)
    expect(waits[-1] >= 1.0, f"no retry waited for the 429's Retry-After of 1 s: waits {waits}", output)

    document = shown(journey, session_id_in(solved))
    session, answered = document["session"], len(requests) - len(faults)
    expect(session["status"] == "completed", f"the session is {session['status']}, not completed")
    tokens = (session["prompt_tokens"], session["completion_tokens"])
    wanted = (PROMPT_TOKENS * answered, COMPLETION_TOKENS * answered)
    expect(tokens == wanted, f"stored tokens {tokens} for {answered} answers: wanted {wanted} (faults count nothing)")
    expect(len(model_turns(document)) == answered, f"{len(model_turns(document))} model turns for {answered} answers")
    return f"429 (Retry-After 1 s) and 2×503 retried through, waits {', '.join(f'{w:.2f}s' for w in waits)}"


def _down_then_back(journey: Journey, provider: FakeProvider) -> str:
    provider.set_default("503")
    provider.enqueue("answer", "answer", "answer")  # the three drafts get through, then the provider goes down
    before = len(provider.requests())
    down = journey.cli(*_solve(out="out"), env=API_KEY_ENV)
    expect(down.returncode == 3, f"solve with the provider down exited {down.returncode}, not 3", down.stderr)
    expect("503" in down.stderr, "the failure does not name the provider's 503", down.stderr)
    session_id = session_id_in(down, RESUME_HINT)
    failed = shown(journey, session_id)
    expect(failed["session"]["status"] == "failed", f"the session is {failed['session']['status']}, not failed")
    kept = {turn["id"]: turn["key"] for turn in model_turns(failed)}
    answered_down = sum(r["kind"] == "answer" for r in provider.requests()[before:])
    expect(len(kept) == answered_down == 3, f"{len(kept)} turns kept of the {answered_down} answered before the fault")

    provider.set_default("answer")
    before = len(provider.requests())
    back = journey.cli(*_solve("--resume", session_id, out="out"), env=API_KEY_ENV)
    expect(back.returncode == 0, f"the resumed solve exited {back.returncode}", back.stdout + back.stderr)
    expect(
        f"resumed: {len(failed['turns'])} stored turns replayed" in back.stdout,
        "the resume replays no stored turns",
        back.stdout,
    )
    answered_back = sum(r["kind"] == "answer" for r in provider.requests()[before:])

    done = shown(journey, session_id)
    session, turns = done["session"], model_turns(done)
    expect(session["status"] == "completed", f"the resumed session is {session['status']}, not completed")
    expect(all(kept[t["id"]] == t["key"] for t in turns if t["id"] in kept), "a stored turn changed on resume")
    expect(set(kept) <= {t["id"] for t in turns}, "turns stored before the failure were lost")
    keys = [t["key"] for t in turns]
    expect(len(set(keys)) == len(keys), "a turn is stored twice", "\n".join(sorted(keys)))
    expect(
        len(turns) - len(kept) == answered_back,
        f"the resume asked {answered_back} questions for {len(turns) - len(kept)} missing turns (a turn asked twice)",
    )
    answered = answered_down + answered_back
    tokens = (session["prompt_tokens"], session["completion_tokens"])
    wanted = (PROMPT_TOKENS * answered, COMPLETION_TOKENS * answered)
    expect(tokens == wanted, f"stored tokens {tokens} over both runs: wanted {wanted}, each answer counted once")
    return (
        f"down: exit 3 with {len(kept)} turns kept; --resume {session_id} asked only the {answered_back} missing ones"
    )


def run(journey: Journey) -> str:
    with FakeProvider(journey, ADD_REPLY) as provider:
        write_config(journey, provider.config(max_retries=3, retry_base_delay_s=0.05, request_timeout_s=30))
        return f"{_flaky(journey, provider)}; {_down_then_back(journey, provider)}"
