-- hwgym trial log, schema version 2 (PRAGMA user_version).
-- Version 2 added trials.cache_hit; writers migrate a version-1 file with
--   ALTER TABLE trials ADD COLUMN cache_hit INTEGER (then user_version 2)
-- and readers accept both (cache_hit is then NULL).
-- One SQLite file per experiment, or shared by many agent processes (WAL mode).
-- Writers: the C logging module (clients/c/hwgym_trials.h) and hwgym.trials (Python).
-- Readers: hwgym replay / export / report / cluster.
PRAGMA user_version = 2;

CREATE TABLE IF NOT EXISTS runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    agent        TEXT    NOT NULL,          -- e.g. "hwgym-search --algo random"
    agent_config TEXT,                      -- JSON object
    env          TEXT    NOT NULL,          -- env id, e.g. "maestro-v0"
    env_config   TEXT,                      -- JSON object given to make
    seed         INTEGER,                   -- the agent's seed
    host         TEXT,
    version      TEXT,                      -- hwgym version that wrote the run
    endpoint     TEXT,                      -- server endpoint used
    started_at   REAL    NOT NULL,          -- unix seconds
    ended_at     REAL                       -- NULL while running or after a crash
);

CREATE TABLE IF NOT EXISTS trials (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    worker       TEXT    NOT NULL DEFAULT '0',  -- agent/worker name within the run
    episode      INTEGER NOT NULL,              -- 0-based per worker
    step         INTEGER NOT NULL,              -- 0-based within the episode; -1 for kind 'eval'
    kind         TEXT    NOT NULL DEFAULT 'step' CHECK (kind IN ('step', 'eval')),
    reset_seed   INTEGER,                       -- seed given to this episode's reset (NULL: none)
    action       TEXT    NOT NULL,              -- JSON: action vector, or design-point object
    observation  TEXT,                          -- JSON (flattened numbers or object)
    reward       REAL,
    terminated   INTEGER,                       -- 0/1
    truncated    INTEGER,                       -- 0/1
    metrics      TEXT,                          -- JSON object: step info or evaluate metrics
    feasible     INTEGER,                       -- 0/1/NULL (from metrics.feasible when present)
    time         REAL    NOT NULL,              -- unix seconds when the result arrived
    cache_hit    INTEGER                        -- 0/1/NULL: answered by the server's evaluation cache (from metrics.cache_hit)
);

CREATE INDEX IF NOT EXISTS trials_by_run ON trials(run_id, worker, episode, step);
