"""Trial log: writes the SQLite schema of schemas/trials.sql (the same one the C logging module writes).

    log = hwgym.TrialLogger("trials.db", agent="my-agent --lr 3e-4", env="diag-v0",
                            env_config={"dims": 3}, seed=0)
    env = log.wrap(hwgym.make("diag-v0", dims=3))      # every reset/step is logged
    ...
    log.close()                                        # or at exit / SIGTERM

WAL journal, a busy timeout and batched transactions make it safe for many processes to share one
file.  Rows are buffered and committed every ``batch_size`` rows or ``flush_interval`` seconds, on
``flush()``/``close()``, at interpreter exit and (when the logger installs its handler) on SIGTERM.
The schema file is found via ``$HWGYM_SCHEMA`` or in the repository next to the package
(``schemas/trials.sql``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, Set, Tuple

import atexit
import json
import os
import signal
import socket
import sqlite3
import threading
import time

import numpy as np

from ._compat import HAVE_GYMNASIUM, gymnasium
from .wire import jsonable

__all__ = ["TrialLogger", "TrialLogWrapper", "TrialLogVectorWrapper", "SCHEMA_VERSION", "schema_path", "open_db"]

#: PRAGMA user_version of the schema this module writes.
SCHEMA_VERSION = 2


def schema_path() -> Any:
    """Path of trials.sql: $HWGYM_SCHEMA, else <repo>/schemas/trials.sql relative to this package."""
    env = os.environ.get("HWGYM_SCHEMA")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "..", "..", "schemas", "trials.sql"), os.path.join(here, "trials.sql")):
        if os.path.isfile(cand):
            return os.path.normpath(cand)
    raise FileNotFoundError("schemas/trials.sql not found next to the hwgym package; set HWGYM_SCHEMA=/path/to/trials.sql")


def _statements(sql: Any) -> Any:
    """Split a SQL script into complete statements (comments kept with their statement)."""
    out, cur = [], ""
    for line in sql.splitlines(keepends=True):
        cur += line
        if sqlite3.complete_statement(cur):
            out.append(cur.strip())
            cur = ""
    if cur.strip() and not all(l.strip().startswith("--") or not l.strip() for l in cur.splitlines()):
        raise ValueError("trailing incomplete SQL statement in schema: %r" % cur[:80])
    return out


def _retry(fn: Any, timeout: float) -> Any:
    """Run fn, retrying 'database is locked' errors SQLite's busy handler does not cover."""
    deadline = time.monotonic() + timeout
    delay = 0.002
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def open_db(path: Any, busy_timeout: Any = 30.0, schema: Any = None) -> Any:
    """Open (creating if needed) a trial DB: WAL, busy timeout, schema of version SCHEMA_VERSION.
    Raises RuntimeError when the file holds another schema version."""
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout = %d" % int(busy_timeout * 1000))
        mode = _retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone()[0], busy_timeout)
        if str(mode).lower() != "wal" and path != ":memory:":
            raise RuntimeError("%s: cannot switch to WAL journal mode (got %s)" % (path, mode))
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        ver = conn.execute("PRAGMA user_version").fetchone()[0]
        if ver == 0:
            with open(schema or schema_path(), encoding="utf-8") as f:
                stmts = _statements(f.read())

            def create() -> None:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if conn.execute("PRAGMA user_version").fetchone()[0] == 0:  # nobody beat us to it
                        for st in stmts:
                            conn.execute(st)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            _retry(create, busy_timeout)
            ver = conn.execute("PRAGMA user_version").fetchone()[0]
        if ver == 1:  # schema 1 -> 2 (schemas/trials.sql): trials.cache_hit
            def migrate() -> None:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if conn.execute("PRAGMA user_version").fetchone()[0] == 1:
                        conn.execute("ALTER TABLE trials ADD COLUMN cache_hit INTEGER")
                        conn.execute("PRAGMA user_version = 2")
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            _retry(migrate, busy_timeout)
            ver = conn.execute("PRAGMA user_version").fetchone()[0]
        if ver != SCHEMA_VERSION:
            raise RuntimeError("%s: trial DB schema version %d, this hwgym writes version %d" % (path, ver, SCHEMA_VERSION))
    except BaseException:
        conn.close()
        raise
    return conn


def _dumps(v: Any) -> Any:
    return None if v is None else json.dumps(jsonable(v), separators=(",", ":"), allow_nan=False)


def _flat_obs(obs: Any) -> Any:
    if isinstance(obs, dict):
        return {k: _flat_obs(v) for k, v in obs.items()}
    if isinstance(obs, (np.ndarray, list, tuple)):
        return np.ravel(np.asarray(obs)).tolist()
    return obs


def _action_json(a: Any) -> Any:
    if isinstance(a, dict):
        return {k: _action_json(v) for k, v in a.items()}
    if isinstance(a, (np.ndarray, list, tuple)):
        return np.asarray(a).tolist()
    return a


def _bool_or_none(v: Any) -> Any:
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return int(bool(v))
    return None


_LIVE: Set["TrialLogger"] = set()  # strong refs: a logger dropped without close() is still flushed at exit
_SIG_INSTALLED = False


def _flush_all_at_exit() -> None:
    for lg in list(_LIVE):
        try:
            lg.close()
        except Exception:
            pass


atexit.register(_flush_all_at_exit)


def _on_sigterm(signum: Any, frame: Any) -> NoReturn:
    raise SystemExit(128 + signum)  # unwinds; atexit then flushes every live logger


class TrialLogger:
    """Writes one run (row of ``runs``) and its trials (rows of ``trials``) to a trial DB.

    ``handle_sigterm``: install a SIGTERM handler that exits through SystemExit so that buffered
    trials are flushed (only from the main thread, and only when SIGTERM has its default action).
    """

    def __init__(self, db_path: str, agent: str, env: str, env_config: Optional[Dict[str, Any]] = None,
                 seed: Optional[int] = None, agent_config: Any = None, endpoint: Optional[str] = None,
                 host: Optional[str] = None, version: Optional[str] = None, batch_size: int = 256,
                 flush_interval: float = 1.0, busy_timeout: float = 30.0, handle_sigterm: bool = True) -> None:
        global _SIG_INSTALLED
        from ._version import __version__
        self.db_path = db_path
        self.batch_size = max(1, int(batch_size))
        self.flush_interval = float(flush_interval)
        self.busy_timeout = float(busy_timeout)
        self._lock = threading.RLock()
        self._buf: List[Any] = []
        self._last_flush = time.monotonic()
        self._episodes: Dict[Any, Any] = {}  # worker -> [episode, next step, reset_seed]
        self._pid = os.getpid()
        self._closed = False
        self._conn = open_db(db_path, busy_timeout)
        row = (str(agent), _dumps(agent_config) if agent_config is not None else None, str(env),
               _dumps(env_config if env_config is not None else {}), None if seed is None else int(seed),
               host or socket.gethostname(), version or __version__, endpoint, time.time())

        def insert() -> Any:
            return self._conn.execute("INSERT INTO runs (agent, agent_config, env, env_config, seed, host, version, "
                                      "endpoint, started_at) VALUES (?,?,?,?,?,?,?,?,?)", row).lastrowid
        self.run_id = _retry(insert, self.busy_timeout)
        _LIVE.add(self)
        if handle_sigterm and not _SIG_INSTALLED and threading.current_thread() is threading.main_thread():
            try:
                if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
                    signal.signal(signal.SIGTERM, _on_sigterm)
                    _SIG_INSTALLED = True
            except (ValueError, OSError):
                pass

    # -- episodes -------------------------------------------------------------------------------
    def begin_episode(self, seed: Any = None, worker: Any = "0") -> Any:
        """Start the next episode of ``worker`` (0-based); returns its index."""
        worker = str(worker)
        with self._lock:
            ep = self._episodes.get(worker)
            n = 0 if ep is None else ep[0] + 1
            self._episodes[worker] = [n, 0, None if seed is None else int(seed)]
            return n

    def log_step(self, action: Any, obs: Any, reward: Any, terminated: Any, truncated: Any, info: Any = None, worker: Any = "0", episode: Any = None, step: Any = None, t: Any = None) -> None:
        """One env step of ``worker``; episode and step default to that worker's counters."""
        worker = str(worker)
        with self._lock:
            ep = self._episodes.get(worker)
            if ep is None:
                self.begin_episode(None, worker)
                ep = self._episodes[worker]
            e = ep[0] if episode is None else int(episode)
            s = ep[1] if step is None else int(step)
            ep[1] = s + 1
            feas = info.get("feasible") if isinstance(info, dict) else None
            self._add((self.run_id, worker, e, s, "step", ep[2], _dumps(_action_json(action)), _dumps(_flat_obs(obs)),
                       _real(reward), _bool_or_none(terminated), _bool_or_none(truncated),
                       _dumps(info if info is not None else {}), _bool_or_none(feas), time.time() if t is None else t))

    def log_eval(self, point: Any, reward: Any, metrics: Any = None, worker: Any = "0", t: Any = None) -> None:
        """One evaluate result (kind 'eval', step -1); episode counts evaluations of ``worker``."""
        worker = str(worker)
        with self._lock:
            key = ("eval", worker)
            n = self._episodes.get(key, -1) + 1
            self._episodes[key] = n
            feas = metrics.get("feasible") if isinstance(metrics, dict) else None
            self._add((self.run_id, worker, n, -1, "eval", None, _dumps(_action_json(point)), None, _real(reward),
                       None, None, _dumps(metrics if metrics is not None else {}), _bool_or_none(feas),
                       time.time() if t is None else t))

    def _add(self, row: Any) -> None:
        if self._closed:
            raise ValueError("TrialLogger is closed")
        self._buf.append(row)
        if len(self._buf) >= self.batch_size or time.monotonic() - self._last_flush >= self.flush_interval:
            self.flush()

    def flush(self) -> None:
        """Commit buffered trials in one transaction."""
        with self._lock:
            if not self._buf or self._conn is None:
                return
            rows, self._buf = self._buf, []

            def write() -> None:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    self._conn.executemany(
                        "INSERT INTO trials (run_id, worker, episode, step, kind, reset_seed, action, observation, reward, "
                        "terminated, truncated, metrics, feasible, time) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
            try:
                _retry(write, self.busy_timeout)
            except BaseException:
                self._buf[:0] = rows  # keep them for the next attempt
                raise
            self._last_flush = time.monotonic()

    def close(self) -> None:
        """Flush, stamp the run's ended_at and close the DB (idempotent)."""
        with self._lock:
            if self._closed:
                return
            if os.getpid() != self._pid:  # a forked child: the parent owns the buffer and the file
                self._closed = True
                return
            try:
                self.flush()
                _retry(lambda: self._conn.execute("UPDATE runs SET ended_at = ? WHERE id = ?", (time.time(), self.run_id)),
                       self.busy_timeout)
            finally:
                self._closed = True
                self._conn.close()
                self._conn = None
                _LIVE.discard(self)

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wrap(self, env: Any, worker: Any = "0") -> Any:
        """An env wrapper logging every reset and step of ``env`` (single or vector env)."""
        if hasattr(env, "num_envs") and hasattr(env, "single_action_space"):
            return TrialLogVectorWrapper(env, self, worker=worker)
        return TrialLogWrapper(env, self, worker=worker)


def _real(v: Any) -> Any:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


class _LocalWrapBase:
    """Minimal stand-in for gymnasium.Wrapper / gymnasium.vector.VectorWrapper."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self, *, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Any:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        return self.env.step(action)

    def close(self, **kwargs: Any) -> Any:
        return self.env.close(**kwargs)

    @property
    def unwrapped(self) -> Any:
        return self.env.unwrapped

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> Any:
        self.close()
        return False


if TYPE_CHECKING:
    _WrapBase = _LocalWrapBase
    _VecWrapBase = _LocalWrapBase
elif HAVE_GYMNASIUM:
    import gymnasium.vector
    _WrapBase = gymnasium.Wrapper
    # 1.x: VectorWrapper; 0.29: VectorEnvWrapper (same role)
    _VecWrapBase = getattr(gymnasium.vector, "VectorWrapper", None) or gymnasium.vector.VectorEnvWrapper
else:
    _WrapBase = _VecWrapBase = _LocalWrapBase


def _wrapper_init(self: Any, base: Any, env: Any, logger: Any, worker: Any) -> None:
    if base is _LocalWrapBase or (base is _WrapBase and isinstance(env, gymnasium.Env)) or \
            (base is _VecWrapBase and isinstance(env, gymnasium.vector.VectorEnv)):
        base.__init__(self, env)
    else:  # not a Gymnasium env (e.g. a MultiAgentWorker): wrap it without Gymnasium's type check
        self.env = env
        for a in ("_action_space", "_observation_space", "_metadata", "_cached_spec",
                  "_single_action_space", "_single_observation_space"):
            self.__dict__[a] = None
    self.logger = logger
    self.worker = str(worker)


class TrialLogWrapper(_WrapBase):
    """Logs every step of the wrapped single env (or multi-agent worker) as trials of ``worker``;
    ``reset`` starts a new episode.  ``TrialLogger.wrap`` picks this or TrialLogVectorWrapper."""

    def __init__(self, env: Any, logger: Any, worker: Any = "0") -> None:
        _wrapper_init(self, _WrapBase, env, logger, worker)

    def reset(self, *, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Any:
        obs, info = self.env.reset(seed=seed, options=options)
        self.logger.begin_episode(seed, self.worker)
        return obs, info

    def step(self, action: Any) -> Any:
        obs, rew, term, trunc, info = self.env.step(action)
        self.logger.log_step(action, obs, rew, term, trunc, info, worker=self.worker)
        return obs, rew, term, trunc, info


class TrialLogVectorWrapper(_VecWrapBase):
    """Logs every step of a vector env: sub-env i logs as worker ``"<worker>/<i>"``.  The autoreset
    steps (the step after a sub-env ended, whose action the server ignores) are not trials; they
    start that sub-env's next episode."""

    def __init__(self, env: Any, logger: Any, worker: Any = "0") -> None:
        _wrapper_init(self, _VecWrapBase, env, logger, worker)
        self._n = int(env.num_envs)
        self._ended = np.zeros(self._n, dtype=bool)

    def _w(self, i: int) -> Any:
        return "%s/%d" % (self.worker, i)

    def reset(self, *, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Any:
        obs, info = self.env.reset(seed=seed, options=options)
        for i in range(self._n):
            s = seed[i] if isinstance(seed, (list, tuple)) else (None if seed is None else int(seed) + i)
            self.logger.begin_episode(s, self._w(i))
        self._ended[:] = False
        return obs, info

    def _same_step(self) -> Any:
        mode = getattr(self.env, "metadata", None) or {}
        mode = mode.get("autoreset_mode") if isinstance(mode, dict) else None
        return getattr(mode, "value", mode) == "SameStep"

    def step(self, actions: Any) -> Any:
        obs, rew, term, trunc, info = self.env.step(actions)
        n = self._n
        same = self._same_step()  # same-step autoreset: every step is a trial; obs of ended envs is the reset one
        for i in range(n):
            if self._ended[i] and not same:
                self.logger.begin_episode(None, self._w(i))
                continue
            o = {k: v[i] for k, v in obs.items()} if isinstance(obs, dict) else obs[i]
            inf = {k: v[i] for k, v in info.items()
                   if not k.startswith("_") and not isinstance(v, dict) and info.get("_" + k, np.ones(n, bool))[i]}
            a = {k: v[i] for k, v in actions.items()} if isinstance(actions, dict) else np.asarray(actions)[i]
            if same and (term[i] or trunc[i]):  # log the final obs / info, not the reset ones
                if "final_obs" in info:
                    o, fi = info["final_obs"][i], info.get("final_info", {})
                    inf = {k: v[i] for k, v in fi.items() if not k.startswith("_") and not isinstance(v, dict)
                           and fi.get("_" + k, np.ones(n, bool))[i]}
                elif "final_observation" in info:
                    o, inf = info["final_observation"][i], dict(info["final_info"][i] or {})
            self.logger.log_step(a, o, rew[i], term[i], trunc[i], inf, worker=self._w(i))
            if same and (term[i] or trunc[i]):
                self.logger.begin_episode(None, self._w(i))
        self._ended = np.asarray(term, dtype=bool) | np.asarray(trunc, dtype=bool)
        return obs, rew, term, trunc, info
