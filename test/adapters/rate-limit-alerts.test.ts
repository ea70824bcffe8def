/** The alerting hook counts `client.registered` over all clients: every registration is a new client id, so a per-client count would never reach a spike. */
import { describe, expect, it } from 'vitest';
import { alertingAudit } from '../../examples/rate-limit/alerts.js';
import type { AuditEvent } from '../../src/index.js';

describe('alertingAudit', () => {
  it('a flood of dynamic registrations alerts', () => {
    const alerts: string[] = [];
    const hook = alertingAudit((_event, why) => alerts.push(why), { threshold: 20 });
    for (let i = 0; i < 100; i++) {
      hook({ type: 'client.registered', at: 1_000 + i, clientId: `client-${i}`, public: true } as unknown as AuditEvent);
    }
    expect(alerts).toHaveLength(1);
  });
});
