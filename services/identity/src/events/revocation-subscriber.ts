import type { Consumer, EventBus, RevocationList } from '@payments/service-kit';

/** Every identity process hears every revocation, so a token revoked through one is refused by all. */
export function subscribeToRevocations(
  bus: EventBus,
  list: RevocationList,
  onSubscribed: () => void,
): Promise<Consumer> {
  return bus.broadcast(
    'revocations',
    {
      TokenRevoked: async (event) => {
        list.add(event.data);
      },
    },
    { onSubscribed },
  );
}
