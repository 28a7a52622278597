import type { IDENTITY_OPERATIONS } from '../identity-operations.js';
import type { OperationExamples } from '../operation.js';
import { ADA, ada, GRACE, LINUS, NOW, OPENED_AT, page } from './samples.js';

/** A restricted key of Ada's billing server: it reads and moves money, and does nothing else. */
const apiKey = {
  id: '0d2f4b6a-8c1e-4a3b-9d5f-7b9c1e3a5d60',
  object: 'api_key',
  user_id: ADA,
  name: 'billing server',
  type: 'restricted',
  livemode: true,
  prefix: 'rk_live_',
  last4: '9f3c',
  scopes: ['read', 'money'],
  expires_at: '2027-03-16T10:00:00.000Z',
  last_used_at: null,
  created_at: NOW,
};

const token = {
  token:
    'eyJhbGciOiJFUzI1NiIsImtpZCI6Ik4yaDdRb1pXIiwidHlwIjoiSldUIn0.' +
    'eyJzdWIiOiI1YjBmOGE0ZS0zYzFkLTRlN2EtOWYyYi04ZDZjMWEyZTRiNzAiLCJyb2xlIjoidXNlciJ9.' +
    'MEUCIQDx2nq0Zr8',
  token_type: 'Bearer',
  expires_in: 900,
};

/** Examples of identity's operations: tokens and users. */
export const IDENTITY_EXAMPLES = {
  login: {
    request: { identity: 'ada@example.com', password: 'correct horse battery staple' },
    response: token,
  },
  loginAlias: { request: { username: 'ada', password: 'correct horse battery staple' }, response: token },
  refreshToken: { response: token },
  getSigningKeys: {
    response: {
      keys: [
        {
          kty: 'EC',
          crv: 'P-256',
          x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
          y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
          kid: 'N2h7QoZW',
          alg: 'ES256',
          use: 'sig',
        },
      ],
    },
  },
  registerUser: {
    request: { username: 'ada', email: 'ada@example.com', password: 'correct horse battery staple' },
    response: ada,
  },
  getUser: { response: ada },
  updateUser: {
    request: { email: 'ada.lovelace@example.com', current_password: 'correct horse battery staple' },
    response: { ...ada, email: 'ada.lovelace@example.com', updated_at: NOW },
  },
  deleteUser: { request: { confirm: true } },
  setUserStatus: {
    request: { status: 'locked', reason: 'Chargebacks on three deposits; see case 1182' },
    response: { ...ada, status: 'locked', updated_at: NOW },
  },
  findUsers: {
    response: {
      data: [
        ada,
        {
          id: GRACE,
          username: 'grace',
          email: 'grace@example.com',
          role: 'user',
          status: 'active',
          created_at: OPENED_AT,
          updated_at: OPENED_AT,
        },
        {
          id: LINUS,
          username: 'linus',
          email: 'linus@example.com',
          role: 'admin',
          status: 'active',
          created_at: OPENED_AT,
          updated_at: OPENED_AT,
        },
      ],
      has_more: false,
      pagination: page(3),
    },
  },
  createApiKey: {
    request: { name: 'billing server', scopes: ['read', 'money'], expires_at: '2027-03-16T10:00:00.000Z' },
    response: {
      ...apiKey,
      secret: 'rk_live_4c1e8a2f6b0d9e3a7c5f1b8d2e6a0c4f9b3d7e1a5c8f2b6d0e4a9c3f7b1d9f3c',
    },
  },
  listApiKeys: {
    response: {
      data: [{ ...apiKey, last_used_at: '2026-03-16T10:04:12.000Z' }],
      has_more: false,
      pagination: page(1),
    },
  },
} satisfies { [K in keyof typeof IDENTITY_OPERATIONS]?: OperationExamples };
