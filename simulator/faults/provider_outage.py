"""``provider_outage``: the model provider fails; circuit breaker, fallback, response cache.

**The outage**: every call to the failed provider in ``[at_seconds, at_seconds + duration_seconds)``
fails; its error comes back ``failure_seconds`` after the call (calls admitted before the outage
finish normally). The consumer treats it as a transient failure and retries with the model's
backoff and jitter for as long as it takes (``simulator.faults.transient``). Without
jitter, the partitions that failed together keep retrying together: their retries arrive in
synchronized waves, and a wave that is above the provider's limits is answered with 429s (counted
in ``http_429s`` and in the errors time series).

**Circuit breaker** (``model.circuit_breaker``, :class:`ModelRouter`): after ``failure_threshold``
consecutive failures of the primary it opens for ``open_seconds``: calls skip the primary (no
``failure_seconds`` wait) and go to the fallback, or fail at once without one. Then it lets one
trial call through: success closes it, failure opens it again. A 429 is not a failure of the
provider.

**Fallback provider** (``model.fallback``): its own RPM, TPM, concurrency and model version.
Without a breaker, each call first waits for the primary's error and then goes to the fallback.
Every call the fallback admits counts in ``fallback_calls``.

**Response cache** (``model.cache``, :class:`RepeatPolicy`): the cache sits at the model gateway,
shared by the workers, and stores every answer the provider returns. A completed step that runs
again (redelivered and not skipped by dedupe) finds its answer within ``ttl_hours`` and pays
nothing. A call whose worker crashed keeps running at the provider (which does not know the caller
died), and the gateway stores its answer when it comes back (at the call's start + its step
time): the redelivered step finds it when it is tried after that and within ``ttl_hours`` of it;
otherwise (no cache, the answer not back yet, or expired) the call is paid again (the engine's
rule). A TTL shorter than the time from the call to its redelivery is no use after a crash.
Keyed by prompt hash + model version, the cache only answers a
caller of the model version that wrote the answer (otherwise it misses and the model is called
again); keyed by prompt hash alone it also answers across versions, counted in
``wrong_model_version_served``. Which version wrote an answer
and which one a caller uses are read from the router's routing periods
(:meth:`ModelRouter.version_at`).

**Recorded results** (``checkpoint.reuse_recorded_results`` with per-step checkpoints): a
redelivered step that had completed reads its recorded answer back instead of calling the model.

Layers: :class:`ModelRouting` (in every simulation: the router, when the design has a breaker or
a fallback, and the repeat policy) and :class:`ProviderOutages` (the ``provider_outage`` fault).
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import simpy

from simulator.closed_forms.provider import provider_capacity_eps
from simulator.design import CacheKey, CheckpointGranularity, Design
from simulator.engine.hooks import FaultLayer, Layers, amend
from simulator.engine.metrics import UTILISATION_CAP, sig
from simulator.engine.provider import Provider
from simulator.engine.router import PRIMARY, ModelRouter
from simulator.faults.transient import DelayHook, TransientRetries
from simulator.result import FaultWindow, SimulationResult
from simulator.scenario import ProviderOutage, Scenario

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.partition import Partition
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault

class RepeatPolicy:
    """Decides whether a repeated agent step calls the model (see the module docstring).

    ``router``: gives the model version of a call at a time (``None``: one version only).
    Counters: ``wrong_model_version_served``, ``read_back`` (recorded results reused),
    ``version_misses`` (a versioned cache that held another version's answer).
    """

    def __init__(self, design: Design, router: ModelRouter | None):
        cache = design.model.cache
        self.ttl_s = cache.ttl_hours * 3600.0 if cache.enabled else -1.0
        self.versioned = cache.key is CacheKey.prompt_hash_and_model_version
        self.read_back_recorded = (
            design.checkpoint.reuse_recorded_results
            and design.checkpoint.granularity is CheckpointGranularity.per_step
        )
        self.router = router
        self.wrong_model_version_served = 0
        self.read_back = 0
        self.version_misses = 0

    def __call__(
        self, group: ConsumerGroup, part: Partition, pos: int, t: float, completed: bool
    ) -> int:
        """0: the model is called again (counted as repeated); 2: answered without a call; -1:
        an abandoned call the cache cannot answer, the engine's rule (paid again)."""
        start = part.first_start[pos]
        if not completed:
            # The crashed worker's call kept running at the provider; the gateway cached its
            # answer when it came back (if it has, by now) for the repeat to find.
            if self.ttl_s < 0.0 or math.isnan(start):
                return -1
            answered = start + part.step[pos]
            if answered > t:
                return -1
            return self._cached(group, start, answered, t, abandoned=True)
        if self.read_back_recorded:
            self.read_back += 1
            return 2
        if self.ttl_s >= 0.0 and not math.isnan(start):
            return self._cached(group, start, part.first_finish[pos], t, abandoned=False)
        group.model_calls_repeated += 1
        return 0

    def _cached(
        self, group: ConsumerGroup, start: float, answered: float, t: float, abandoned: bool
    ) -> int:
        """A repeat at ``t`` of a call started at ``start`` and answered at ``answered``: 2 when
        the cache holds a usable answer (within the TTL, of the caller's model version unless
        keyed by prompt alone), else the call is made again (0, or -1 for an abandoned call)."""
        if t - answered <= self.ttl_s:
            router = self.router
            then = router.version_at(start) if router is not None else PRIMARY
            now = router.version_at(t) if router is not None else PRIMARY
            if then == now or not self.versioned:
                group.cache_hits += 1
                if then != now:
                    self.wrong_model_version_served += 1
                return 2
            self.version_misses += 1
        if abandoned:
            return -1
        group.model_calls_repeated += 1
        return 0


def build_router(sim: Simulation) -> ModelRouter | None:
    """A :class:`ModelRouter` for the design's breaker and fallback, or None when it has neither."""
    model = sim.design.model
    if not (model.fallback.enabled or model.circuit_breaker.enabled):
        return None
    fallback = None
    if model.fallback.enabled:
        fallback = Provider(model.fallback, sim.workload.tokens_per_call, track_concurrency=True)
    return ModelRouter(
        sim.provider,
        fallback,
        breaker=model.circuit_breaker.enabled,
        failure_threshold=model.circuit_breaker.failure_threshold,
        open_seconds=model.circuit_breaker.open_seconds,
    )


class ModelRouting(FaultLayer):
    """The agent group's model stage and repeated calls, in every simulation.

    ``router``: a :class:`ModelRouter` in place of the primary provider when the design has a
    circuit breaker or a fallback (else None); ``repeat``: the :class:`RepeatPolicy` that decides
    a repeated agent step. Contributes ``fallback_calls`` (with a router),
    ``wrong_model_version_served``, and a note when the breaker opened.
    """

    def __init__(self) -> None:
        self.router: ModelRouter | None = None
        self.repeat: RepeatPolicy | None = None

    @classmethod
    def wanted(cls, design: Design, scenario: Scenario) -> bool:
        """Always installed: every agent call goes through the design's model section."""
        return True

    def install(self, sim: Simulation, layers: Layers) -> None:
        """Put the router in front of the agent group (when the design has one); build the
        repeat policy."""
        self.retries = layers.get(TransientRetries)
        self.router = build_router(sim)
        if self.router is not None:
            sim.groups["agent"].stage = self.router
        self.repeat = RepeatPolicy(sim.design, self.router)

    def on_repeat(
        self, group: ConsumerGroup, part: Partition, pos: int, t: float, completed: bool
    ) -> int:
        """A repeated agent step: the repeat policy decides (see :class:`RepeatPolicy`)."""
        if self.repeat is None:
            return -1
        return self.repeat(group, part, pos, t, completed)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``fallback_calls``, ``fallback_wait_mean_s``, ``fallback_utilisation``,
        ``primary_failures``, ``wrong_model_version_served``, ``model_wait_mean_s`` and the
        breaker's note."""
        figures: dict[str, float] = {"model_wait_mean_s": self.model_wait_mean_s(sim)}
        notes: list[str] = []
        router = self.router
        if router is not None:
            figures["fallback_calls"] = router.fallback_calls
            figures["primary_failures"] = router.primary_failures
            fallback = router.fallback
            if fallback is not None and fallback.admitted:
                figures["fallback_wait_mean_s"] = sig(fallback.gateway_wait_s / fallback.admitted)
                figures["fallback_utilisation"] = fallback_utilisation(sim, result)
            if router.breaker_opened:
                notes.append(
                    f"circuit breaker opened {router.breaker_opened} times; "
                    f"{router.fallback_calls} calls went to the fallback"
                )
        else:
            # No breaker and no fallback: every call the failed primary refused was sent to it.
            figures["primary_failures"] = sim.provider.rejected_down
        if self.repeat is not None:
            figures["wrong_model_version_served"] = self.repeat.wrong_model_version_served
        return amend(result, notes, **figures)

    def model_wait_mean_s(self, sim: Simulation) -> float:
        """Mean seconds a model call the providers started waited for them: its wait at the
        gateway for a concurrency slot plus its backoff after 429s, over the calls started by
        the primary and the fallback (0 without calls), to 6 significant figures."""
        providers = [sim.provider]
        if self.router is not None and self.router.fallback is not None:
            providers.append(self.router.fallback)
        calls = sum(p.admitted for p in providers)
        if calls == 0:
            return 0.0
        waited = sum(p.gateway_wait_s for p in providers)
        if self.retries is not None:
            waited += self.retries.rate_limit_wait_s
        return sig(waited / calls)


def fallback_utilisation(sim: Simulation, result: SimulationResult) -> float:
    """The agent group's offered load (model calls/s due) over the fallback provider's smallest
    ceiling (its concurrency over the measured mean step time, its RPM, its TPM over the tokens
    of a call: :func:`simulator.closed_forms.provider.provider_capacity_eps`), as a fraction
    capped at :data:`UTILISATION_CAP`, to 6 significant figures: what the fallback would carry if
    every call due went to it, re-sent calls (a kicked member's redeliveries) not counted."""
    agent = result.metrics.by_group.get("agent")
    step_s = agent.mean_step_s if agent is not None else sim.workload.groups["agent"].mean_step_s
    fallback = sim.design.model.fallback
    capacity = min(provider_capacity_eps(fallback, step_s, sim.workload.tokens_per_call).values())
    offered = sim.workload.groups["agent"].offered_eps
    if capacity <= 0:
        return UTILISATION_CAP
    return sig(min(offered / capacity, UTILISATION_CAP))


class ProviderOutages(FaultLayer):
    """``provider_outage`` faults (see the module docstring): the failed provider's window, the
    breaker's wait for errors, and the agent group's delay before it learns of a failed call."""

    kinds = ("provider_outage",)

    def __init__(self) -> None:
        self.routing: ModelRouting | None = None
        self.retries: TransientRetries | None = None
        self.last_end_s = -math.inf

    def install(self, sim: Simulation, layers: Layers) -> None:
        """Find the model's router and the transient retries this fault acts through."""
        self.routing = layers.get(ModelRouting)
        self.retries = layers.get(TransientRetries)

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``provider_outage``: sets the failed provider's window at time 0."""
        assert isinstance(fault, ProviderOutage)
        assert self.routing is not None and self.retries is not None, "not installed"
        start = float(fault.at_seconds)
        end = start + fault.duration_seconds
        router = self.routing.router
        if fault.provider == "fallback":
            if router is not None and router.fallback is not None:
                router.fallback.add_outage(start, end)
                if fault.hang_until_end:
                    router.fallback.add_hang(start, end)
        else:
            sim.provider.add_outage(start, end)
            if fault.hang_until_end:
                sim.provider.add_hang(start, end)
            if router is not None:
                router.failure_s = max(router.failure_s, fault.failure_seconds)
            self.retries.reject_delays["agent"] = _error_delay(
                router, sim.provider, fault.failure_seconds
            )
        sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=start, end_s=end))
        self.last_end_s = max(self.last_end_s, end)
        return
        yield  # a process that acts at time 0 only

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``model_recovery_s``: seconds from the end of the last outage until the agent group's
        last transient retry (0 when nothing was retried after it); ``breaker_return_s``: seconds
        the calls kept going to the fallback after the primary was back (the breaker's open time
        running out: its trial call then closes it), to the end of the window if they never came
        back, 0 without a breaker; ``outage_calls_unanswered``: calls no provider answered (tried
        again later)."""
        assert self.retries is not None, "not installed"
        if self.last_end_s == -math.inf:
            return result
        recovery = max(0.0, self.retries.model_last_retry_s - self.last_end_s)
        figures: dict[str, float | None] = {"model_recovery_s": sig(recovery)}
        router = self.routing.router if self.routing is not None else None
        back = [min(e, sim.duration) for e in router.period_ends] if router is not None else []
        # Without a breaker every call tries the primary first: none waits on the fallback.
        figures["breaker_return_s"] = sig(max([0.0, *(b - self.last_end_s for b in back)]))
        figures["outage_calls_unanswered"] = (
            router.unanswered if router is not None else sim.provider.rejected_down
        )
        return amend(result, (), **figures)


def _error_delay(router: ModelRouter | None, primary: Provider, failure_s: float) -> DelayHook:
    """Seconds until a consumer learns of a failed call: the primary's ``failure_s``, or the rest
    of its hang window (none for a call an open breaker failed at once)."""

    def delay(t: float) -> float:
        if router is not None:
            return router.last_delay
        return max(failure_s, primary.error_delay(t))

    return delay
