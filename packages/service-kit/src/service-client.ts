import { AppError } from './errors.js';
import { serviceAuthorization } from './service-credential.js';

export interface ServiceResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

export interface ServiceClient {
  get<T>(path: string, headers?: Record<string, string>): Promise<ServiceResponse<T>>;
}

export interface ServiceClientOptions {
  timeoutMs?: number;
  /** Sent as `Authorization: Bearer …` on every call, for the other service's `/internal` endpoints. */
  serviceToken?: string;
}

/** JSON over HTTP to another service, with a timeout; an unreachable service is a 503 to our caller. */
export function createServiceClient(baseUrl: string, options: ServiceClientOptions = {}): ServiceClient {
  const timeoutMs = options.timeoutMs ?? 3000;
  const credential = options.serviceToken ? serviceAuthorization(options.serviceToken) : {};
  return {
    async get<T>(path: string, headers: Record<string, string> = {}) {
      let response: Response;
      try {
        response = await fetch(new URL(path, baseUrl), {
          headers: { ...headers, ...credential },
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'A service this request depends on is unavailable',
          undefined,
          {
            'Retry-After': '1',
          },
        );
      }
      const text = await response.text();
      return {
        status: response.status,
        body: (text ? JSON.parse(text) : null) as T,
        headers: response.headers,
      };
    },
  };
}
