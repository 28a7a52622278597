import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * Whose resource each admin action touched (`owner`: the user it belongs to, null for the platform's own), and a
 * reason that may be absent: the other services' admin actions arrive as AdminActionTaken events, most without one
 * (ADR 0096). Indexed for the trail's filters by actor and by owner.
 */
export const adminActionOwner: Migration = {
  name: '020_admin_action_owner',
  up: sqlSteps(
    `ALTER TABLE admin_actions ADD COLUMN owner uuid`,
    `ALTER TABLE admin_actions ALTER COLUMN reason DROP NOT NULL`,
    `CREATE INDEX admin_actions_actor ON admin_actions (actor, created_at, id)`,
    `CREATE INDEX admin_actions_owner ON admin_actions (owner, created_at, id) WHERE owner IS NOT NULL`,
  ),
  async down(knex) {
    await knex.raw(`DROP INDEX admin_actions_owner`);
    await knex.raw(`DROP INDEX admin_actions_actor`);
    await knex.raw(`ALTER TABLE admin_actions DROP COLUMN owner`);
    // `reason` stays nullable: the rows without one cannot be given one (the trail is append-only).
  },
};
