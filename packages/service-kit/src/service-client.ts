import { AppError } from './errors.js';
import { serviceAuthorization } from './service-credential.js';
import { injectTraceContext } from './tracing.js';

export interface ServiceResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

export interface ServiceClient {
  get<T>(path: string, headers?: Record<string, string>): Promise<ServiceResponse<T>>;
  /** A JSON body when `body` is given. */
  post<T>(path: string, body?: unknown, headers?: Record<string, string>): Promise<ServiceResponse<T>>;
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
  const send = async <T>(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<ServiceResponse<T>> => {
    let response: Response;
    const sent: Record<string, string> = {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
      ...credential,
    };
    injectTraceContext(sent);
    try {
      response = await fetch(new URL(path, baseUrl), {
        method,
        headers: sent,
        body: body === undefined ? undefined : JSON.stringify(body),
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
  };
  return {
    get: (path, headers = {}) => send('GET', path, headers),
    post: (path, body, headers = {}) => send('POST', path, headers, body),
  };
}
