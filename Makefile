# Shortcuts; each target is one plain cargo command you can run yourself.

.PHONY: run test lint fmt ci soak bench screenshots

# The Personal API on ./tributary.db, with demo data on first start.
run:
	cargo run --release -p personal-api

# The whole suite. PostgreSQL halves run when a server answers at
# TRIBUTARY_TEST_POSTGRES_URL and are skipped (loudly) otherwise.
test:
	cargo test --workspace

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy -p tributary-bench --features run -- -D warnings

fmt:
	cargo fmt --all

# The pages' screenshots in docs/images, taken again by the Chromium walks
# (which check each page with axe at 1280 and 390 px as they go).
screenshots:
	TRIBUTARY_REQUIRE_BROWSER=1 cargo test -p tributary-e2e --test chromium
	cp -R target/browser-screenshots/. docs/images/

# What CI runs, PostgreSQL required.
ci:
	bash .ci/run

# 10 minutes of mixed load on both servers (not part of the tests).
soak:
	python3 bench/soak.py

# Tributary beside a bare actix-web server sending the same bytes, same run,
# and its statement readers beside the Python parsers mt-940 and ofxtools
# (installed into target/bench-venv; docs/performance.md).
# Options: make bench ARGS="--backend sqlite --rows 10000".
bench:
	python3 -m venv target/bench-venv
	target/bench-venv/bin/pip install --quiet mt-940==5.1.1 ofxtools==1.1.1
	cargo build --release -p tributary
	cargo run --release -p tributary-bench --features run -- --parsers 20 --python target/bench-venv/bin/python $(ARGS)
