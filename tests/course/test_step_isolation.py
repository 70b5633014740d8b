"""A step judges its own decisions: choices a learner has not reached yet (left at their defaults,
or set out of order) do not fail an earlier step's checks.

Found by walking the course out of order: with the event log of the reference but 8 agent
instances and every later section at its default, step 3's broker-loss check reported "280
acknowledged events lost" although replication factor 3 and acks=all lost none; the losses were
consumer drops the later steps deal with. (Since the model gateway queues the calls beyond the
provider's concurrency, simulator 1.4.0, those default consumers fall behind without dropping
anything: the check must still pass and blame nothing on the log.)
"""

from __future__ import annotations

from app.grading.grader import grade, load_material
from simulator.design import Design
from tests.course.conftest import STEPS_DIR


def test_step_3_judges_the_event_log_not_the_consumers_defaults(course):
    reference = course.reference_design
    assert reference is not None
    careless = Design(
        event_log=reference.event_log,
        api=reference.api,
        consumers=Design().consumers.model_copy(
            update={"agent": Design().consumers.agent.model_copy(update={"instances": 8})}
        ),
    )
    material = load_material(STEPS_DIR)
    result = grade(careless, material)
    step = next(s for s in result.steps if s.id == "event-log")
    verdicts = {c.id: c.status for c in step.checks}
    assert verdicts["broker-loss-nothing-lost"] == "pass"
    assert verdicts["offset-reset-safe"] == "pass"
    broker = next(c for c in step.checks if c.id == "broker-loss-nothing-lost")
    assert "Lost 0 acknowledged events, 0 in all" in broker.explanation
