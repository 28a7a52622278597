import type { RequestOptions } from '../http-transport.js';
import { pagedList, type PagedList } from '../pagination.js';
import type {
  NewUserRequest,
  Page,
  StatusChangeRequest,
  User,
  UserDeletionRequest,
  UserSearchQuery,
  UserUpdateRequest,
} from '../types.js';
import type { ResourceDeps } from './resource-deps.js';

export interface UserUpdateOptions extends RequestOptions {
  /** The `ETag` read before (see `onResponse`): a stale one makes the update a 409. */
  ifMatch?: string;
}

export function usersResource({ transport }: ResourceDeps) {
  return {
    /** Registers a user (no token needed). */
    async register(user: NewUserRequest, options?: RequestOptions): Promise<User> {
      return transport.body<User>('registerUser', { body: user, options });
    },

    async get(userId: string, options?: RequestOptions): Promise<User> {
      return transport.body<User>('getUser', { params: { id: userId }, options });
    },

    /** A partial update; a new e-mail or password needs `current_password`. */
    async update(userId: string, changes: UserUpdateRequest, options: UserUpdateOptions = {}): Promise<User> {
      const { ifMatch, ...rest } = options;
      return transport.body<User>('updateUser', {
        params: { id: userId },
        body: changes,
        ...(ifMatch !== undefined && { ifMatch }),
        options: rest,
      });
    },

    /**
     * Deletes the user with their accounts and transactions; `{ confirm: true }` is the API's confirmation. An
     * admin deleting someone else may say why (`reason`, kept in the trail of admin actions).
     */
    async delete(userId: string, confirmation: UserDeletionRequest, options?: RequestOptions): Promise<void> {
      const { confirm, reason } = confirmation;
      await transport.call<void>('deleteUser', {
        params: { id: userId },
        query: { confirm },
        ...(reason !== undefined && { body: { reason } }),
        options,
      });
    },
  };
}

export function adminUsersResource({ transport }: ResourceDeps) {
  const findPage = async (query: UserSearchQuery = {}, options?: RequestOptions) =>
    transport.body<Page<User>>('findUsers', { query, options });
  return {
    /** Users by exact `username` or `email`, the start of either (`q`), or `status`; every page, by username. */
    find: (query: UserSearchQuery = {}, options?: RequestOptions): PagedList<User> =>
      pagedList((window) => findPage({ ...query, ...window }, options), query),
    findPage,
    /** Activates, disables or locks a user (admins only); disabling or locking revokes their tokens. */
    async setStatus(userId: string, change: StatusChangeRequest, options?: RequestOptions): Promise<User> {
      return transport.body<User>('setUserStatus', { params: { id: userId }, body: change, options });
    },
  };
}
