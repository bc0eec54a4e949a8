"""Pushing each published snapshot to the control plane (coder.md 4.4).

The first push of a process is flagged ``initial``, so a restarted agent (whose versions
start again at 1) is accepted. Transient failures (connection errors, 5xx, 429) are retried
with exponential backoff from 250 ms doubling to 30 s; ``accepted: false`` is not retried
(the next change carries a higher version); a refused request (other 4xx) waits for the
next change; ``501`` or ``410`` mean the control plane has context sync turned off, and the
pusher stops cleanly.

With ``agent.push_home_files = false`` a push leaves out what was read from the user's home
(``HOME_SCOPES``: home instructions, user and plugin skills, user MCP configs), its hash and
size recomputed. Each push carries what the control plane needs to reach the agent back (``agent``: its
advertised URL, a per-run secret its API accepts, the run id, OS and home). Between pushes
a heartbeat every ``heartbeat`` seconds keeps the agent "online"; on shutdown a last one
says it is going offline.

Bodies and answers are the models of ``agentcontext.wire.sync``, the definition the
control plane validates against: a snapshot that would break it is not sent (it is logged
and waits for the next change, as a refused push does).
"""

from __future__ import annotations

import logging
from typing import Literal

import anyio
import httpx
from pydantic import ValidationError

from agentcontext.agent.context import ContextAgent
from agentcontext.agent.discovered import DiscoveredWatch
from agentcontext.resource import HOME_SCOPES, Scope
from agentcontext.snapshot import Snapshot
from agentcontext.wire.sync import (
    MAX_RESOURCES,
    AgentInfo,
    ContractError,
    HeartbeatRequest,
    PushRequest,
    PushResponse,
    fitted,
    validated,
)

log = logging.getLogger("agentcontext.agent.push")
PUSH_PATH = "/api/v1/agent/context"
HEARTBEAT_PATH = "/api/v1/agent/heartbeat"
KEEPALIVE_SECONDS = 30.0  # over the 15 s heartbeat, well below the 60 s our servers keep an idle connection


JSON = {"Content-Type": "application/json"}


Outcome = Literal["accepted", "rejected", "refused", "disabled"]


class Pusher:
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        initial_backoff: float = 0.25,
        max_backoff: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        info: AgentInfo | None = None,
        heartbeat: float = 15.0,
        home_files: bool = True,
        timeout: float = 30.0,
    ) -> None:
        """``home_files``: False leaves what was read from the user's home out of every push; ``timeout``: seconds
        for each request."""
        self.url = base_url.rstrip("/") + PUSH_PATH
        self.heartbeat_url = base_url.rstrip("/") + HEARTBEAT_PATH
        self.token = token
        self.info = info or AgentInfo()
        self.heartbeat = heartbeat
        self._left_out: frozenset[Scope] = frozenset() if home_files else HOME_SCOPES
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._transport = transport
        self._timeout = timeout
        self.pushed: list[tuple[int, bool, Outcome]] = []  # (version, initial, outcome), for status and tests
        self.tells_watch = True  # heartbeats carry the discovered watch's state (an older control plane: not)
        self.stopped_reason: str | None = None

    async def run(self, agent: ContextAgent) -> None:
        """Push every published snapshot until cancelled or the control plane says sync is off."""
        # one connection for the heartbeats and pushes (the control plane keeps it 60 s between requests);
        # it expires well before, so a push never goes out on a connection the server is closing then
        limits = httpx.Limits(keepalive_expiry=KEEPALIVE_SECONDS)
        async with httpx.AsyncClient(timeout=self._timeout, transport=self._transport, limits=limits) as client:
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._beat, client, agent.discovered)
                    await self._push_all(client, agent)
                    group.cancel_scope.cancel()
            finally:
                if self.stopped_reason is None:
                    with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                        await self._send_heartbeat(client, online=False)

    async def _beat(self, client: httpx.AsyncClient, watch: DiscoveredWatch) -> None:
        """Tell the control plane every ``heartbeat`` seconds that this agent is alive, and at once when a
        watched discovered file changed (after a heartbeat that was not answered: at the next beat)."""
        answered = True
        while True:
            with anyio.move_on_after(self.heartbeat):
                await (watch.noticed() if answered and self.tells_watch else anyio.sleep_forever())
            answered = await self._send_heartbeat(client, online=True, watch=watch)

    async def _send_heartbeat(
        self, client: httpx.AsyncClient, *, online: bool, watch: DiscoveredWatch | None = None
    ) -> bool:
        """Whether the control plane answered it (2xx)."""
        headers = {"Authorization": f"Bearer {self.token}", **JSON}
        state, changes = watch.report() if watch is not None and self.tells_watch else (None, 0)
        beat = HeartbeatRequest(agent=self.info, online=online, discovered=state)
        try:
            response = await client.post(
                self.heartbeat_url, content=beat.model_dump_json(exclude_none=True), headers=headers
            )
        except httpx.HTTPError as exc:
            log.debug("heartbeat failed: %s", exc)
            return False
        if response.status_code == 422 and state is not None:
            # a control plane from before ``discovered`` refuses the field: beat without it (it rechecks on beats)
            log.info("the control plane does not take the discovered watch's state: heartbeats go without it")
            self.tells_watch = False
            return await self._send_heartbeat(client, online=online)
        if response.status_code >= 400:
            log.debug("heartbeat answered %s", response.status_code)
            return False
        if state is not None and watch is not None:
            watch.told(changes)
        return True

    async def _push_all(self, client: httpx.AsyncClient, agent: ContextAgent) -> None:
        initial = True
        last: Snapshot | None = None
        with agent.subscription() as events:
            while True:
                snapshot = agent.snapshot
                if snapshot.version > 0 and snapshot is not last:
                    outcome, last = await self._push(client, agent, snapshot, initial)
                    if outcome == "disabled":
                        return
                    if outcome != "refused":
                        initial = False
                if agent.snapshot is last or agent.snapshot.version == 0:  # nothing new to push
                    await events.receive()

    async def _push(
        self, client: httpx.AsyncClient, agent: ContextAgent, snapshot: Snapshot, initial: bool
    ) -> tuple[Outcome, Snapshot]:
        """Push until answered; a retry sends the newest snapshot, not the one that first failed."""
        headers = {"Authorization": f"Bearer {self.token}", **JSON}
        delay = self.initial_backoff
        while True:
            try:
                body = self._body(snapshot, initial)
            except ContractError as exc:  # the control plane would refuse it: say why, wait for the next change
                log.error("context push not sent, the snapshot breaks the contract: %s", exc)
                self.pushed.append((snapshot.version, initial, "refused"))
                return "refused", snapshot
            try:
                response = await client.post(self.url, content=body, headers=headers)
            except httpx.HTTPError as exc:
                log.warning("context push failed (%s); retrying in %.2fs", str(exc) or type(exc).__name__, delay)
            else:
                outcome = self._outcome(response)
                if outcome is not None:
                    self.pushed.append((snapshot.version, initial, outcome))
                    return outcome, snapshot
                log.warning("context push answered %s; retrying in %.2fs", response.status_code, delay)
            await anyio.sleep(delay)
            delay = min(delay * 2, self.max_backoff)
            snapshot = agent.snapshot

    def _body(self, snapshot: Snapshot, initial: bool) -> bytes:
        """The push of ``snapshot``, fitted to what the control plane takes only when it does not fit as it is (its
        JSON is measured once, by the validation, in the usual case).

        Raises: ContractError."""
        pushed = snapshot.without(self._left_out).within(MAX_RESOURCES)
        try:
            return self._validated(pushed, initial)
        except ContractError:
            smaller = fitted(pushed)
            if smaller is pushed:
                raise
            return self._validated(smaller, initial)

    def _validated(self, snapshot: Snapshot, initial: bool) -> bytes:
        raw = {**snapshot.to_dict(), "initial": initial, "agent": self.info.to_dict()}
        return validated(PushRequest, raw).model_dump_json(exclude_unset=True).encode("utf-8")

    def _outcome(self, response: httpx.Response) -> Outcome | None:
        """None means "transient: try again"."""
        status = response.status_code
        if status in (501, 410):
            self.stopped_reason = _message(response) or "context sync is disabled on the control plane"
            log.info("context push stopped: %s", self.stopped_reason)
            return "disabled"
        if status == 429 or status >= 500:
            return None
        if status >= 400:
            log.error("context push refused (%s): %s%s", status, _message(response), _REFUSED_HINT.get(status, ""))
            return "refused"
        try:
            answer = PushResponse.model_validate_json(response.content)
        except ValidationError as exc:  # not an answer we understand: not accepted, and nothing to retry
            log.error("context push answered %s off the contract: %s", status, exc.errors()[:1])
            return "rejected"
        return "accepted" if answer.accepted else "rejected"


# what a user can do about a refusal that no retry mends
_REFUSED_HINT = {
    401: "; the control plane knows no agent by this token: check --token-file or AGENTCONTEXT_AGENT_TOKEN, or"
    " make a new one with `agentcontext workspace-agents rotate`",
}


def _message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200]
    return str(data.get("message") or data.get("detail") or "") if isinstance(data, dict) else ""
