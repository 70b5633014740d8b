"""The deployment files agree with the app: N instances on PostgreSQL behind the proxy, the
secret required, only the proxy exposed, the proxy's limits above the app's."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import yaml

from app.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
COMPOSE = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
NGINX = (DEPLOY / "nginx.conf").read_text()
DEFAULTS = Settings(_env_file=None)


def megabytes(value: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([kKmM]?)", value).groups()  # type: ignore[union-attr]
    return int(number) * {"": 1, "k": 1024, "m": 1024 * 1024}[unit.lower()]


def test_several_app_instances_share_one_postgresql():
    app = COMPOSE["services"]["app"]
    assert app["deploy"]["replicas"] >= 2
    assert app["environment"]["DATABASE_URL"].startswith("postgresql+psycopg://")
    assert "@db:5432/" in app["environment"]["DATABASE_URL"]
    assert app["depends_on"]["db"]["condition"] == "service_healthy"
    assert app["environment"]["ENV"] == "production"


def test_the_secret_and_database_password_must_be_given():
    app = COMPOSE["services"]["app"]["environment"]
    assert app["SECRET_KEY"].startswith("${SECRET_KEY:?")
    assert COMPOSE["services"]["db"]["environment"]["POSTGRES_PASSWORD"].startswith(
        "${POSTGRES_PASSWORD:?"
    )


def test_only_the_proxy_publishes_a_port():
    published = {name for name, service in COMPOSE["services"].items() if service.get("ports")}
    assert published == {"proxy"}
    assert COMPOSE["networks"]["internal"]["internal"] is True
    assert COMPOSE["services"]["app"]["networks"] == ["internal"]
    assert "public" in COMPOSE["services"]["proxy"]["networks"]


def test_the_proxy_spreads_requests_over_the_instances_within_the_apps_limits():
    assert re.search(r"server app:8000\b", NGINX)
    assert "proxy_pass http://designlab;" in NGINX
    body = re.search(r"client_max_body_size (\w+);", NGINX).group(1)  # type: ignore[union-attr]
    assert megabytes(body) >= DEFAULTS.max_body_bytes
    read = re.search(r"proxy_read_timeout (\d+)s;", NGINX).group(1)  # type: ignore[union-attr]
    assert int(read) > DEFAULTS.sim_timeout_seconds
    assert "proxy_set_header X-Request-ID $request_id;" in NGINX
    assert "X-Forwarded-For" in NGINX


def test_every_variable_the_compose_file_reads_is_in_the_example_env():
    text = (DEPLOY / "compose.yaml").read_text()
    used = set(re.findall(r"\$\{(\w+)", text))
    example = {
        line.split("=", 1)[0]
        for line in (DEPLOY / "env.example").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    }
    assert used <= example, used - example


def test_forwarded_addresses_are_trusted_only_from_the_proxy():
    """nginx sets X-Forwarded-For to the address it saw (a client's own header is dropped), and
    the app believes that header only from the proxy's fixed address on the internal network."""
    assert re.search(r"proxy_set_header X-Forwarded-For \$remote_addr;", NGINX)
    assert "$proxy_add_x_forwarded_for" not in NGINX
    trusted = COMPOSE["services"]["app"]["environment"]["FORWARDED_ALLOW_IPS"]
    assert "*" not in trusted
    proxy = COMPOSE["services"]["proxy"]["networks"]["internal"]["ipv4_address"]
    assert [address.strip() for address in trusted.split(",")] == [proxy]
    pool = COMPOSE["networks"]["internal"]["ipam"]["config"][0]
    assert ipaddress.ip_address(proxy) in ipaddress.ip_network(pool["subnet"])
    assert ipaddress.ip_address(proxy) not in ipaddress.ip_network(pool["ip_range"])
