/**
 * loadConfig: the policy controller's default follows the watched scope unless it was set explicitly,
 * by flag or by environment; the metrics and probe listeners, their defaults, and the settings that
 * cannot go together.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULTS, UsageError, loadConfig } from '../../src/runtime/config.js';

describe('loadConfig: policies', () => {
  const cases: Array<{ name: string; argv: string[]; env?: NodeJS.ProcessEnv; want: boolean }> = [
    { name: 'all namespaces: on by default', argv: [], want: true },
    { name: 'some namespaces: off by default', argv: ['--namespaces=team-a'], want: false },
    { name: 'some namespaces, --policies: on', argv: ['--namespaces=team-a', '--policies'], want: true },
    { name: 'some namespaces, --policies=true: on', argv: ['--namespaces', 'team-a', '--policies=true'], want: true },
    { name: 'all namespaces, --policies=false: off', argv: ['--policies=false'], want: false },
    {
      name: 'some namespaces from the environment, ENABLE_POLICIES=true: on',
      argv: [],
      env: { WATCH_NAMESPACES: 'team-a', ENABLE_POLICIES: 'true' },
      want: true,
    },
    { name: 'all namespaces, ENABLE_POLICIES=false: off', argv: [], env: { ENABLE_POLICIES: 'false' }, want: false },
    { name: 'an empty ENABLE_POLICIES counts as unset', argv: ['--namespaces=team-a'], env: { ENABLE_POLICIES: '' }, want: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(loadConfig(c.argv, c.env ?? {}).policies, c.want);
    });
  }
});

describe('loadConfig: listeners', () => {
  it("defaults: kubebuilder's ports on every interface, metrics in the clear", () => {
    const cfg = loadConfig([], {});
    assert.deepEqual(cfg.metricsBindAddress, { port: 8080 });
    assert.deepEqual(cfg.healthProbeBindAddress, { port: 8081 });
    assert.equal(cfg.metricsSecure, false);
    assert.equal(cfg.metricsCertDir, undefined);
    assert.deepEqual(cfg.metricsAuth, DEFAULTS.metricsAuth);
  });

  it('flags set both listeners; 0 disables metrics', () => {
    const cfg = loadConfig(['--metrics-bind-address', '0', '--health-probe-bind-address=127.0.0.1:9440'], {});
    assert.equal(cfg.metricsBindAddress, null);
    assert.deepEqual(cfg.healthProbeBindAddress, { host: '127.0.0.1', port: 9440 });
  });

  it('the environment sets them, and a flag wins over it', () => {
    const env = { METRICS_BIND_ADDRESS: ':9100', HEALTH_PROBE_BIND_ADDRESS: ':9101', METRICS_SECURE: 'true', METRICS_CERT_DIR: '/certs' };
    const cfg = loadConfig(['--metrics-bind-address=127.0.0.1:0'], env);
    assert.deepEqual(cfg.metricsBindAddress, { host: '127.0.0.1', port: 0 });
    assert.deepEqual(cfg.healthProbeBindAddress, { port: 9101 });
    assert.equal(cfg.metricsSecure, true);
    assert.equal(cfg.metricsCertDir, '/certs');
  });

  it('--metrics-secure alone is a bool flag that takes no value', () => {
    const cfg = loadConfig(['--metrics-secure', '--metrics-cert-dir', '/certs'], {});
    assert.equal(cfg.metricsSecure, true);
  });

  it('PORT in the environment is ignored (platforms set it); --port says what replaced it', () => {
    assert.deepEqual(loadConfig([], { PORT: '3000' }).metricsBindAddress, { port: 8080 });
    assert.throws(
      () => loadConfig(['--port=0'], {}),
      (e: unknown) => e instanceof UsageError && /--metrics-bind-address.*--health-probe-bind-address/.test(e.message),
    );
  });

  const refused: Array<{ name: string; argv: string[]; env?: NodeJS.ProcessEnv; message: RegExp }> = [
    { name: 'a bare port', argv: ['--metrics-bind-address=8080'], message: /^--metrics-bind-address wants host:port, :port or 0/ },
    {
      name: 'a bad port from the environment',
      argv: [],
      env: { HEALTH_PROBE_BIND_ADDRESS: ':99999' },
      message: /^HEALTH_PROBE_BIND_ADDRESS wants a port/,
    },
    { name: 'probes disabled', argv: ['--health-probe-bind-address=0'], message: /cannot be 0/ },
    {
      name: 'both listeners on one port',
      argv: ['--metrics-bind-address=:9000', '--health-probe-bind-address=127.0.0.1:9000'],
      message: /need different ports/,
    },
    {
      name: 'secure without a certificate directory',
      argv: ['--metrics-secure'],
      message: /--metrics-secure needs --metrics-cert-dir.*tls\.crt and tls\.key/,
    },
  ];
  for (const c of refused) {
    it(`refused: ${c.name}`, () => {
      assert.throws(
        () => loadConfig(c.argv, c.env ?? {}),
        (e: unknown) => e instanceof UsageError && c.message.test(e.message),
      );
    });
  }

  it('accepted: the same port on two different hosts, two ephemeral ports, secure with metrics disabled', () => {
    loadConfig(['--metrics-bind-address=127.0.0.1:9000', '--health-probe-bind-address=127.0.0.2:9000'], {});
    loadConfig(['--metrics-bind-address=:0', '--health-probe-bind-address=:0'], {});
    assert.equal(loadConfig(['--metrics-secure', '--metrics-bind-address=0'], {}).metricsBindAddress, null);
  });
});

describe('loadConfig: leader election', () => {
  const cases: Array<[string, string[], NodeJS.ProcessEnv, boolean]> = [
    ["a developer's run (no KUBERNETES_SERVICE_HOST): off", [], {}, false],
    ['in a pod: on', [], { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, true],
    [
      "in a pod with an explicit kubeconfig (not the pod's own cluster identity): off",
      ['--kubeconfig=/k'],
      { KUBERNETES_SERVICE_HOST: '10.96.0.1' },
      false,
    ],
    ['asked for by flag outside a pod: on', ['--leader-elect'], {}, true],
    ['asked for by LEADER_ELECT outside a pod: on', [], { LEADER_ELECT: 'true' }, true],
    ['turned off in a pod: off', ['--leader-elect=false'], { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, false],
  ];
  for (const [name, argv, env, want] of cases) it(name, () => assert.equal(loadConfig(argv, env).leaderElect, want));
});
