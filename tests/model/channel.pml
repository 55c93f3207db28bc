/* The channel protocol of runtime/src/channel.cpp and the wait of runtime/src/proc.cpp, as a
 * Promela model for Spin: one producer VP sends K messages on a channel of N slots, one consumer
 * VP receives them, and an optional third party aborts the run. Checked (tests/model/check):
 *   - no message is lost, duplicated or reordered (assertions on every value received);
 *   - no lost wake-up and no deadlock: the futex sleep has no timeout here, so a wake-up the
 *     producer fails to give leaves the consumer blocked forever, an invalid end state;
 *   - the posted receive's hand-off (Posted -> Claimed -> Done, cancel back to Idle) never lets
 *     a sender write a withdrawn buffer, and the receiver always takes a completed hand-off;
 *   - a large hand-off copied in chunks by both sides (Claimed -> Copying -> Done) copies every
 *     chunk once, and its sender goes on (its payload no longer valid) only after the last
 *     chunk, the receiver's too, is copied;
 *   - an abort releases a waiting consumer.
 * Spin explores every interleaving under sequential consistency: the model checks the
 * protocol's logic; the fences of the code (sleep_fence in Proc::wait_until, publish_fence in
 * Fabric::notify: a seq_cst fence each, or membarrier's asymmetric pair, futex.hpp) are what make
 * the real memory behave so for the sleeping/published pair.
 * Messages take one slot or are continued over up to half the ring (every length explored);
 * when the ring is full the producer goes on in another segment, recycled from the consumer or
 * new, and the consumer follows once it has taken every message before the segment's end.
 * Mirrors: push, fill, next_segment, front, retire, take_front, try_hand_over, post, cancel_post,
 * take_posted_arrival, share_copy, copy_chunks, help_post (channel.cpp); Proc::receive and Proc::wait_until's sleep (proc.cpp);
 * Fabric::notify (machine.cpp). */

#ifndef N
#define N 4          /* ring slots (the real ring has 16 or 64; 4 reaches "full" quickly) */
#endif
#define MAXSLOTS (N / 2)  /* the most slots one message is continued over: half the ring */
#ifndef K
#define K 4          /* messages sent */
#endif
#ifndef ABORT
#define ABORT 0      /* 1: a third party may abort the run at any moment */
#endif

#define IDLE 0
#define POSTED 1
#define CLAIMED 2
#define DONE 3
#define COPYING 4
#define CHUNKS 2     /* a shared copy's chunks */
#define GONE 255     /* the sender's payload after it went on */

/* The segments: S rings of N slots (slot i of segment g at g*N + i), each with its link to the
 * next and the position where the producer left it; the emptied ones on their way back. K + 1
 * segments: more than a run can hold at once, so the producer never lacks one. */
#define S (K + 1)
byte seq[S * N];
byte val[S * N];         /* the payload: every slot a message takes holds its value */
byte slots[S * N];       /* a first slot's message: the slots it takes */
byte seg_next[S];        /* 0: none yet; else the next segment + 1 */
byte seg_end[S];
chan returned = [S] of { byte };
byte fresh = 1;          /* segments never used yet: fresh .. S-1 (segment 0 is the first) */
byte head = 0;           /* producer */
byte consumed_seen = 0;  /* producer: the last value of consumed it read */
byte enqueued = 0;       /* producer: messages put in a ring or handed over */
byte producer_seg = 0;
byte seg_start = 0;      /* producer: where it started writing producer_seg */
byte consumed = 0;       /* the consumer's published position */
byte tail = 0;           /* consumer */
byte dequeued = 0;       /* consumer */
byte consumer_seg = 0;
/* The posted receive. */
byte post_state = IDLE;
byte post_expected = 0;
byte post_val = 0;
/* A shared copy (Channel::share_copy): the sender's payload, the next chunk to take, how many are
 * copied, and what each chunk of the posted buffer holds. */
byte copy_source = GONE;
byte chunk_next = 0;
byte chunks_done = 0;
byte chunk_val[CHUNKS];
/* The consumer's wait words; the run's abort and finish flags. */
byte wake = 0;
bool sleeping = false;
bool aborted = false;
bool finished = false;

inline notify() {       /* Fabric::notify: after publishing, wake the consumer if it sleeps */
  if
  :: sleeping -> wake++
  :: else -> skip
  fi
}

/* Channel::room_for: the producer's ring has `want` free slots from head on */
#define ROOM(want) (head + want - (consumed_seen > seg_start -> consumed_seen : seg_start) <= N)

inline next_segment() { /* Channel::next_segment */
  if
  :: nempty(returned) -> returned ? q
  :: empty(returned) -> assert(fresh < S); q = fresh; fresh++
  fi;
  seg_next[q] = 0;
  seg_end[producer_seg] = head;
  seg_next[producer_seg] = q + 1;   /* publishes seg_end too */
  producer_seg = q;
  seg_start = head
}

inline push(v) {        /* Channel::push and fill */
  /* A message fits one slot, or is continued over up to MAXSLOTS (every length explored). */
  want = 1;
  do
  :: want < MAXSLOTS -> want++
  :: break
  od;
  if
  :: !ROOM(want) ->
     consumed_seen = consumed;
     if
     :: !ROOM(want) -> next_segment()
     :: else -> skip
     fi
  :: else -> skip
  fi;
  /* the continuation slots' payload, never their sequence words */
  k = 1;
  do
  :: k < want -> val[producer_seg * N + (head + k) % N] = v; k++
  :: else -> break
  od;
  val[producer_seg * N + head % N] = v; slots[producer_seg * N + head % N] = want;
  seq[producer_seg * N + head % N] = head + 1;
  head = head + want; enqueued++
}

inline copy_chunks(k) {   /* Channel::copy_chunks, either side */
  do
  :: chunk_next >= CHUNKS -> break   /* none left: no taking (the count would wrap) */
  :: else ->
     atomic { k = chunk_next; chunk_next++ };   /* fetch_add */
     if
     :: k >= CHUNKS -> break
     :: else ->
        assert(post_state == COPYING && copy_source != GONE);   /* a valid payload, a live post */
        chunk_val[k] = copy_source;
        chunks_done++
     fi
  od
}

inline try_hand_over(v, delivered) {   /* Channel::try_hand_over */
  claimed = false;
  atomic {   /* the CAS Posted -> Claimed */
    if
    :: post_state == POSTED -> post_state = CLAIMED; claimed = true
    :: else -> skip
    fi
  }
  if
  :: claimed && post_expected != enqueued -> post_state = POSTED    /* not next in line */
  :: claimed && post_expected == enqueued ->
     assert(post_state == CLAIMED);   /* never into a withdrawn buffer */
     if   /* a small payload, copied at once, or a large one, shared (both explored) */
     :: post_val = v; post_state = DONE; delivered = true
     :: copy_source = v; chunk_next = 0; chunks_done = 0;
        k = 0;
        do
        :: k < CHUNKS -> chunk_val[k] = 0; k++
        :: else -> break
        od;
        post_state = COPYING;
        copy_chunks(k);
        (chunks_done == CHUNKS);   /* the receiver's chunk too */
        post_val = v;
        k = 0;
        do
        :: k < CHUNKS -> post_val = (chunk_val[k] == v -> post_val : 0); k++
        :: else -> break
        od;
        post_state = DONE; delivered = true;
        copy_source = GONE   /* the sender goes on: its payload may change */
     fi
  :: else -> skip
  fi
}

/* Channel::front: whether a message is there; moves on to the next segment when this one is
 * done (Channel::retire hands it back). */
inline front(there) {
  do
  :: seq[consumer_seg * N + tail % N] == tail + 1 -> there = true; break
  :: else ->
     next = seg_next[consumer_seg];   /* read once: a retired segment is the producer's again */
     if
     :: next == 0 -> there = false; break
     :: else ->
        if
        :: tail == seg_end[consumer_seg] -> returned ! consumer_seg; consumer_seg = next - 1
        :: else -> skip   /* published before the link: look again */
        fi
     fi
  od
}

inline take_front(v) {  /* Channel::take_front */
  v = val[consumer_seg * N + tail % N];
  k = 1;
  do   /* a continued message: every slot it takes holds its bytes */
  :: k < slots[consumer_seg * N + tail % N] ->
     assert(val[consumer_seg * N + (tail + k) % N] == v); k++
  :: else -> break
  od;
  tail = tail + slots[consumer_seg * N + tail % N]; consumed = tail;
  dequeued++
}

proctype producer() {
  byte i = 1, want, k, q;
  bool delivered, claimed;
  do
  :: i <= K ->
     delivered = false;
     if   /* a large message tries the hand-over (any may be large: both choices explored) */
     :: try_hand_over(i, delivered);
        if   /* the bounded rendezvous: a second try if the receiver posts meanwhile */
        :: !delivered && post_state == POSTED -> try_hand_over(i, delivered)
        :: else -> skip
        fi
     :: skip
     fi;
     if
     :: !delivered -> push(i)
     :: else -> skip
     fi;
     notify();
     i++
  :: else -> break
  od;
  /* Fabric::finish also wakes the VPs that wait; leaving that out here keeps every message's
   * own notify on trial: a lost wake-up leaves the consumer asleep for good. */
  finished = true
}

proctype consumer() {
  byte i = 1, v, ticket, k, next;
  bool there, posted, ready;
  do
  :: i <= K ->
     posted = false;
     front(there);
     if
     :: there -> take_front(v); assert(v == i); goto received
     :: else -> skip
     fi;
     if   /* a large receive posts its buffer (both choices explored) */
     :: post_expected = dequeued; post_state = POSTED; posted = true
     :: skip
     fi;
     /* Proc::wait_until's sleep: ticket, flag, fence, check, futex wait (no timeout here). */
     do
     :: ticket = wake;
        if   /* help_post */
        :: posted && post_state == COPYING -> copy_chunks(k)
        :: else -> skip
        fi;
        sleeping = true;
        front(there);
        ready = there || (posted && post_state == DONE);
        if
        :: ready -> sleeping = false; break
        :: !ready && aborted -> sleeping = false; break
        :: !ready && !aborted && finished ->
           front(there);
           ready = there || (posted && post_state == DONE);
           assert(ready || aborted);   /* the producer sent all K: a finished peer left them */
           sleeping = false; break
        :: !ready && !aborted && !finished ->
           (wake != ticket);            /* futex_wait(wake, ticket): blocks until woken */
           sleeping = false
        fi
     od;
     if
     :: posted ->
        if
        :: post_state == DONE -> assert(post_val == i); post_state = IDLE; goto received
        :: else -> skip
        fi;
        /* cancel_post: withdraw, unless a sender claimed it (then its copy completes). */
        do
        :: atomic { post_state == POSTED -> post_state = IDLE; break }
        :: atomic { post_state == DONE -> assert(post_val == i); post_state = IDLE; goto received }
        :: post_state == CLAIMED -> skip   /* spin until the sender decides */
        :: post_state == COPYING -> copy_chunks(k)   /* help it finish */
        od
     :: else -> skip
     fi;
     if
     :: aborted -> goto end_consumer
     :: else -> skip
     fi;
     front(there);
     assert(there);
     take_front(v);
     assert(v == i);
received:
     i++
  :: else -> break
  od;
  assert(post_state == IDLE);
end_consumer:
  skip
}

proctype aborter() {    /* Fabric::fail: set the flag, wake every VP */
  aborted = true;
  wake++
}

init {
  atomic {
    run producer();
    run consumer();
    if
    :: ABORT -> run aborter()
    :: else -> skip
    fi
  }
}
