import type { Argv } from 'yargs';
import type { LoginRequest } from '@payments/client';
import type { GlobalArgs } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import { canPrompt, obtainPassword, promptLine } from '../prompt.js';
import type { Run } from './run.js';

/** The `sub` claim of a JWT; only read for display and for `/user/{id}`, never trusted for anything. */
export function tokenSubject(token: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      sub?: unknown;
    };
    return typeof payload.sub === 'string' ? payload.sub : undefined;
  } catch {
    return undefined;
  }
}

export function minutes(seconds: number): string {
  const m = Math.max(0, Math.round(seconds / 60));
  return m === 1 ? '1 minute' : `${m} minutes`;
}

export function authCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli
    .command(
      'register',
      'Create a user',
      (y) =>
        y
          .option('username', { type: 'string', demandOption: true, describe: 'Unique user name' })
          .option('email', { type: 'string', demandOption: true, describe: 'E-mail address' })
          .option('password', {
            type: 'string',
            describe: 'Asked without echo when omitted (or set PAYMENTS_PASSWORD)',
          })
          .example('$0 register --username alice --email alice@example.com', 'asks for the password'),
      run(async (ctx, argv: { username: string; email: string; password?: string }) => {
        const password = await obtainPassword(argv.password, ctx.env, { confirm: true });
        const body = await ctx.api.users.register({ username: argv.username, email: argv.email, password });
        if (ctx.out.json) return ctx.out.data(body);
        ctx.out.line(`Registered ${body.username} (user id ${body.id}).`);
        ctx.out.note(`Log in with: payments login --username ${body.username}`, 'dim');
      }),
    )
    .command(
      'login',
      'Log in and keep the session token (mode 0600)',
      (y) =>
        y
          .option('username', { type: 'string', describe: 'Log in by user name' })
          .option('email', { type: 'string', describe: 'Log in by e-mail' })
          .option('identity', { type: 'string', describe: 'User name or e-mail' })
          .option('password', {
            type: 'string',
            describe: 'Asked without echo when omitted (or set PAYMENTS_PASSWORD)',
          })
          .conflicts('username', ['email', 'identity'])
          .conflicts('email', 'identity')
          .example('$0 login --username alice', 'asks for the password')
          .example('PAYMENTS_PASSWORD=… $0 login --email alice@example.com', 'in a script'),
      run(async (ctx, argv: { username?: string; email?: string; identity?: string; password?: string }) => {
        let who: Omit<LoginRequest, 'password'>;
        if (argv.username) who = { username: argv.username };
        else if (argv.email) who = { email: argv.email };
        else if (argv.identity) who = { identity: argv.identity };
        else if (canPrompt()) who = { identity: await promptLine('Username or e-mail: ') };
        else throw usageError('Say who is logging in: --username, --email or --identity.');
        const password = await obtainPassword(argv.password, ctx.env);
        const body = await ctx.api.auth.login({ ...who, password });
        const now = Math.floor(Date.now() / 1000);
        const userId = tokenSubject(body.token);
        const login = Object.values(who)[0] as string;
        await ctx.state.writeSession({
          token: body.token,
          expires_at: now + body.expires_in,
          api_url: ctx.baseUrl,
          login,
          ...(userId ? { user_id: userId } : {}),
        });
        if (ctx.out.json) {
          return ctx.out.data({
            user_id: userId,
            expires_in: body.expires_in,
            expires_at: now + body.expires_in,
          });
        }
        ctx.out.line(`Logged in as ${login}. The session lasts ${minutes(body.expires_in)}.`);
      }),
    )
    .command(
      'logout',
      'End the session (the token is revoked) and forget it',
      (y) => y.example('$0 logout', ''),
      run(async (ctx) => {
        const session = await ctx.state.readSession();
        if (session) {
          // Forgetting the token locally is what matters; the server may already consider it gone.
          await ctx.api.auth.logout().catch(() => undefined);
          await ctx.state.clearSession();
        }
        if (ctx.out.json) return ctx.out.data({ logged_out: Boolean(session) });
        ctx.out.line(session ? 'Logged out.' : 'Not logged in.');
      }),
    )
    .command(
      'whoami',
      'Show the logged-in user',
      (y) => y.example('$0 whoami', ''),
      run(async (ctx) => {
        const session = await ctx.state.readSession();
        const userId = session ? (session.user_id ?? tokenSubject(session.token)) : undefined;
        if (!session || !userId) {
          throw new CliError(EXIT.auth, 'You are not logged in.', ['Log in with: payments login']);
        }
        const body = await ctx.api.users.get(userId);
        if (ctx.out.json) return ctx.out.data(body);
        const left = session.expires_at - Math.floor(Date.now() / 1000);
        ctx.out.line(`${body.username} <${body.email}> (user id ${body.id}, role ${body.role ?? 'user'})`);
        ctx.out.note(`Session expires in ${minutes(left)}.`, 'dim');
      }),
    );
}
