"""The architecture diagram: drawn from the design, annotated with measured or estimated use."""

from __future__ import annotations

from app.web.diagram import MAX_PARTITION_CELLS, architecture
from simulator.design import Design
from simulator.estimate import estimate
from simulator.result import GroupMetrics, Metrics, Timeseries
from simulator.scenario import Scenario
from tests.web.html import soup


def boxes(design: Design, **kwargs):
    return {b.id: b for b in architecture(design, **kwargs).boxes}


def reference_like() -> Design:
    design = Design()
    design.event_log.partitions = 32
    design.consumers.agent.instances = 4
    design.state_store.replicas = 2
    design.tools.runners = 6
    return design


def test_each_partition_instance_runner_and_store_node_is_a_cell():
    drawn = boxes(reference_like())
    assert [c.kind for c in drawn["event-log"].cells] == ["partition"] * 32
    assert len(drawn["group-agent"].cells) == 4
    assert [c.label for c in drawn["state-store"].cells] == ["primary", "replica 1", "replica 2"]
    assert len(drawn["tool-fleet"].cells) == 6
    assert drawn["event-log"].lines[0] == "32 partitions · key tenant_id"


def test_the_api_box_says_a_key_is_required_only_when_a_keyless_start_is_refused():
    design = Design()
    design.api.idempotency_key_required = True
    design.api.missing_key_status = 200
    assert boxes(design)["run-api"].lines[1] == "no key required"
    design.api.idempotency_key_required = False
    design.api.missing_key_status = 400
    assert boxes(design)["run-api"].lines[1] == "key required"


def test_a_large_log_draws_sixty_partitions_and_says_how_many_more():
    design = Design()
    design.event_log.partitions = 200
    log = boxes(design)["event-log"]
    assert len(log.cells) == MAX_PARTITION_CELLS
    assert log.more == "+ 140 more"


def group(utilisation: float) -> GroupMetrics:
    return GroupMetrics(
        arrivals=1,
        processed=1,
        capacity_eps=1.0,
        utilisation=utilisation,
        lag_total_max=0,
        busy_partitions_max=1,
        instances_alive_min=1,
    )


def metrics(**groups: float) -> Metrics:
    return Metrics(
        arrivals=1,
        processed=1,
        throughput_eps=1,
        capacity_eps=1,
        utilisation=1,
        lag_total_max=0,
        backlog_peak=0,
        drain_seconds=0,
        latency_p50_s=0,
        latency_p95_s=0,
        latency_p99_s=0,
        by_group={name: group(u) for name, u in groups.items()},
    )


def test_a_simulation_annotates_the_groups_with_measured_utilisation():
    diagram = architecture(reference_like(), metrics=metrics(agent=0.93, tool=0.5, state=0.02))
    assert diagram.source == "simulation"
    drawn = {b.id: b for b in diagram.boxes}
    agent = drawn["group-agent"].meter
    assert agent is not None
    assert (agent.label, agent.level, agent.fill_width) == (
        "93 % busy (saturated)",
        "saturated",
        agent.width * 0.93,
    )
    assert "Utilisation (last simulation): agent 93 %, tool 50 %, state 2 %." in diagram.description


def test_without_a_run_the_estimate_annotates_and_says_so():
    scenario = Scenario(name="peak")
    design = reference_like()
    diagram = architecture(design, estimate=estimate(design, scenario), scenario="peak")
    assert diagram.source == "estimate"
    agent = {b.id: b for b in diagram.boxes}["group-agent"].meter
    assert (
        agent is not None
        and agent.value == estimate(design, scenario).by_group["agent"].utilisation
    )


def test_partitions_far_above_the_median_lag_are_marked_hot():
    series = Timeseries(
        interval_seconds=1,
        t_s=[0],
        lag_total=[0],
        lag_worst_partition=[0],
        arrivals_eps=[0],
        throughput_eps=[0],
        in_flight=[0],
        errors=[0],
        partition_lag_max=[5, 6, 4, 90, 5, 7],
    )
    design = Design()
    design.event_log.partitions = 6
    log = boxes(design, timeseries=series)["event-log"]
    assert [c.hot for c in log.cells] == [False, False, False, True, False, False]
    assert "1 with lag > 2× median (marked)" in log.lines
    assert log.cells[3].label == "partition 3: largest lag 90 events"


def test_the_step_page_draws_the_diagram_as_labelled_svg(course_client):
    svg = soup(course_client.get("/steps/commit-order")).select_one("#architecture svg")
    assert svg["role"] == "img"
    assert svg.select_one("title").get_text() == "Your architecture"
    assert (
        svg.select_one("desc").get_text().startswith("Run API into an event log of 12 partitions")
    )
    labels = [t.get_text() for t in svg.select("text.meter-label")]
    assert all("%" in label for label in labels if "busy" in label)


def test_a_group_with_no_capacity_reads_no_capacity_not_a_percentage():
    """Zero agent instances: the simulation caps the utilisation at 1000 (100,000 %); the
    diagram says the group has no capacity instead."""
    measured = metrics(agent=1000.0, tool=0.5, state=0.02)
    measured.by_group["agent"] = measured.by_group["agent"].model_copy(update={"capacity_eps": 0.0})
    diagram = architecture(reference_like(), metrics=measured)
    agent = {b.id: b for b in diagram.boxes}["group-agent"].meter
    assert agent is not None
    assert agent.label == "no capacity: 0 slots"
    assert "Utilisation (last simulation): agent no capacity, tool 50 %" in diagram.description
    assert "100,000" not in diagram.description


def test_the_fleet_store_and_providers_show_their_own_ceilings_not_their_groups():
    """A tool group 90 % busy on its partitions with runners 20 % used shows the fleet at 20 %;
    the store shows its write capacity, the providers their tightest of RPM/TPM/concurrency."""
    measured = metrics(agent=0.4, tool=0.9, state=0.7)
    measured.by_group["tool"].limits_utilisation = {"partitions": 0.9, "tool runners": 0.2}
    measured.by_group["state"].limits_utilisation = {
        "partitions": 0.7,
        "state write capacity": 0.05,
    }
    measured.by_group["agent"].limits_utilisation = {"RPM": 0.3, "TPM": 2.7, "partitions": 0.4}
    drawn = boxes(reference_like(), metrics=measured)
    fleet, store, providers = (
        drawn["tool-fleet"].meter,
        drawn["state-store"].meter,
        drawn["model-providers"].meter,
    )
    assert fleet is not None and store is not None and providers is not None
    assert (fleet.value, fleet.label) == (0.2, "20 % busy (ok)")
    assert store.value == 0.05
    assert (providers.value, providers.label) == (2.7, "270 % of TPM (last run)")


def test_without_a_run_the_fleet_meter_is_the_estimates_runner_use():
    scenario = Scenario(name="peak")
    design = reference_like()
    figures = estimate(design, scenario).by_group["tool"]
    fleet = boxes(design, estimate=estimate(design, scenario))["tool-fleet"].meter
    assert fleet is not None
    assert fleet.value == figures.arrivals_eps / figures.limits_eps["tool runners"]


def test_zero_tool_runners_read_no_capacity_not_the_simulations_cap():
    """0 runners: the simulation reports the fleet's use as its cap, 1000; the fleet box says
    it has no capacity, as the tool group box would, never "100,000 % busy"."""
    design = reference_like()
    design.tools.runners = 0
    measured = metrics(agent=0.4, tool=0.3, state=0.02)
    measured.by_group["tool"].limits_utilisation = {"partitions": 0.3, "tool runners": 1000.0}
    drawn = boxes(design, metrics=measured)
    fleet = drawn["tool-fleet"].meter
    assert fleet is not None
    assert fleet.label == "no capacity: 0 slots"
    assert len(fleet.label) * 6 <= fleet.width
    assert fleet.level == "saturated"


def test_the_provider_meter_label_fits_its_box():
    """The meter's words fit the side boxes' width at 10.5 px (about 6 px a character)."""
    measured = metrics(agent=0.4, tool=0.3, state=0.02)
    measured.by_group["agent"].limits_utilisation = {
        "RPM": 0.43,
        "TPM": 0.2,
        "provider concurrency": 0.1,
    }
    drawn = boxes(reference_like(), metrics=measured)
    for box in drawn.values():
        if box.meter is not None:
            assert len(box.meter.label) * 6 <= box.meter.width, box.meter.label
    assert drawn["model-providers"].meter.label == "43 % of RPM (last run)"
