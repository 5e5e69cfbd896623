import { useSyncExternalStore } from "react";

/**
 * The API token, when the server asks for one (CASCADE_TOKEN or CASCADE_READONLY_TOKEN). It is
 * asked for once, when the server first answers UNAUTHENTICATED, and kept in sessionStorage:
 * for this tab until it closes, never written to disk. It goes out as "Authorization: Bearer"
 * over HTTP and as {"authorization": "Bearer …"} in the websocket's connection_init.
 */
export interface AuthState {
  /** The server refused the request for want of a valid token: ask for one. */
  needed: boolean;
  /** What the server said, shown in the dialog ("the token is not valid"). */
  reason: string | null;
  /**
   * Increments when a token is entered: clients made for an older generation are replaced
   * and the app remounts, so every query and subscription starts again with the token.
   */
  generation: number;
}

export const TOKEN_KEY = "cascade.token";

type Listener = () => void;

export class AuthStore {
  private state: AuthState = { needed: false, reason: null, generation: 0 };
  private listeners = new Set<Listener>();

  constructor(private storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> | null = safeSessionStorage()) {}

  get = (): AuthState => this.state;

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  token(): string | null {
    return this.storage?.getItem(TOKEN_KEY) ?? null;
  }

  /** Headers for an HTTP request: Authorization when there is a token. */
  headers(): Record<string, string> {
    const t = this.token();
    return t ? { Authorization: `Bearer ${t}` } : {};
  }

  /** The websocket's connection_init payload. */
  connectionParams(): Record<string, string> {
    const t = this.token();
    return t ? { authorization: `Bearer ${t}` } : {};
  }

  /**
   * The server refused a request made in the given generation for want of a valid token. A
   * refusal from an older generation (a request in flight when a token was entered) is
   * ignored. A token that was refused is dropped, and the server's reason kept to show; with
   * none sent there is nothing to explain.
   */
  unauthenticated(generation: number, reason: string | null): void {
    if (generation !== this.state.generation || this.state.needed) return;
    const sent = this.token() !== null;
    if (sent) this.storage?.removeItem(TOKEN_KEY);
    this.set({ ...this.state, needed: true, reason: sent ? reason : null });
  }

  /** A token was entered: keep it for the session and start every client again. */
  submit(token: string): void {
    this.storage?.setItem(TOKEN_KEY, token.trim());
    this.set({ needed: false, reason: null, generation: this.state.generation + 1 });
  }

  private set(s: AuthState): void {
    this.state = s;
    this.listeners.forEach((l) => l());
  }
}

function safeSessionStorage(): Storage | null {
  try {
    return typeof sessionStorage === "undefined" ? null : sessionStorage;
  } catch {
    return null; // storage disabled: the token lasts as long as the page
  }
}

export const auth = new AuthStore();

export function useAuth(store: AuthStore = auth): AuthState {
  return useSyncExternalStore(store.subscribe, store.get, store.get);
}

/** The websocket close code of a connection_init the server refused: 4401 Unauthorized. */
export const CLOSE_UNAUTHORIZED = 4401;

interface GraphQLErrorLike {
  message: string;
  extensions?: Record<string, unknown> | null;
}

/** The first error with the given extensions.code, if any. */
export function errorWithCode(errors: readonly GraphQLErrorLike[] | undefined, code: string): GraphQLErrorLike | undefined {
  return errors?.find((e) => e.extensions?.code === code);
}

/**
 * fetch with the token, telling store when the server answers 401: for GraphiQL, whose
 * fetcher takes a fetch.
 */
export function authFetch(store: AuthStore, generation: number): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [k, v] of Object.entries(store.headers())) headers.set(k, v);
    const r = await fetch(input, { ...init, headers });
    if (r.status === 401) {
      let reason: string | null = null;
      try {
        const body = await r.clone().json();
        reason = errorWithCode(body?.errors, "UNAUTHENTICATED")?.message ?? null;
      } catch {
        /* not a GraphQL response */
      }
      store.unauthenticated(generation, reason);
    }
    return r;
  };
}
