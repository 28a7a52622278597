/** Which page of a list a caller asked for. */
export interface PageRequest {
  limit: number;
  offset: number;
}

/** One page of a list, and how many items the whole list holds. */
export interface Page<T> {
  data: T[];
  total: number;
}
