/* The channel protocol of runtime/src/channel.cpp and the wait of runtime/src/proc.cpp, as a
 * Promela model for Spin: one producer VP sends K messages on a channel of N slots, one consumer
 * VP receives them, and an optional third party aborts the run. Checked (tests/model/check):
 *   - no message is lost, duplicated or reordered (assertions on every value received);
 *   - no lost wake-up and no deadlock: the futex sleep has no timeout here, so a wake-up the
 *     producer fails to give leaves the consumer blocked forever, an invalid end state;
 *   - the posted receive's hand-off (Posted -> Claimed -> Done, cancel back to Idle) never lets
 *     a sender write a withdrawn buffer, and the receiver always takes a completed hand-off;
 *   - an abort releases a waiting consumer.
 * Spin explores every interleaving under sequential consistency: the model checks the
 * protocol's logic; the seq_cst fences of the code (store_load_fence in Proc::wait_until and
 * Fabric::notify) are what make the real memory behave so for the sleeping/published pair.
 * Messages take one slot or are continued over up to half the ring (every length explored, and
 * the fall-back to one slot when the ring has no room for the continuation).
 * Mirrors: push, fill, push_overflow, front, take_front, try_hand_over, post, cancel_post,
 * take_posted_arrival (channel.cpp); Proc::receive and Proc::wait_until's sleep (proc.cpp);
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

/* The ring: slot sequence words and payloads; producer and consumer positions. */
byte seq[N];
byte val[N];             /* the payload: every slot a message takes holds its value */
byte slots[N];             /* a first slot's message: the slots it takes (1: inline or a block) */
byte head = 0;           /* producer */
byte consumed_seen = 0;  /* producer: the last value of consumed it read */
byte enqueued = 0;       /* producer: messages put in the ring or the overflow list */
byte consumed = 0;       /* the consumer's published position */
byte tail = 0;           /* consumer */
byte dequeued = 0;       /* consumer */
bool front_in_ring = true;
/* The overflow list (a deque under a mutex: each operation atomic) and its counter. */
chan overflow = [K] of { byte };
byte overflow_count = 0;
/* The posted receive. */
byte post_state = IDLE;
byte post_expected = 0;
byte post_val = 0;
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

inline push(v) {        /* Channel::push, fill and push_overflow */
  /* A message fits one slot, or is continued over up to MAXSLOTS (every length explored). */
  want = 1;
  do
  :: want < MAXSLOTS -> want++
  :: break
  od;
  if
  :: overflow_count == 0 && head + want - consumed_seen > N -> consumed_seen = consumed
  :: else -> skip
  fi;
  if   /* no room to continue it: a block in one slot */
  :: head + want - consumed_seen > N -> want = 1
  :: else -> skip
  fi;
  if
  :: overflow_count == 0 && head + want - consumed_seen <= N ->
       /* the continuation slots' payload, never their sequence words */
       k = 1;
       do
       :: k < want -> val[(head + k) % N] = v; k++
       :: else -> break
       od;
       val[head % N] = v; slots[head % N] = want; seq[head % N] = head + 1;
       head = head + want; enqueued++
  :: else ->
       overflow ! v; overflow_count++; enqueued++
  fi
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
     post_val = v; post_state = DONE; delivered = true
  :: else -> skip
  fi
}

/* Channel::front: whether a message is there; sets front_in_ring. */
inline front(there) {
  if
  :: seq[tail % N] == tail + 1 -> front_in_ring = true; there = true
  :: else ->
     if
     :: overflow_count == 0 -> there = false
     :: else ->
        if
        :: seq[tail % N] == tail + 1 -> front_in_ring = true
        :: else -> front_in_ring = false
        fi;
        there = true
     fi
  fi
}

inline take_front(v) {  /* Channel::take_front */
  if
  :: front_in_ring ->
     v = val[tail % N];
     k = 1;
     do   /* a continued message: every slot it takes holds its bytes */
     :: k < slots[tail % N] -> assert(val[(tail + k) % N] == v); k++
     :: else -> break
     od;
     tail = tail + slots[tail % N]; consumed = tail
  :: else -> overflow ? v; overflow_count--
  fi;
  dequeued++
}

proctype producer() {
  byte i = 1, want, k;
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
  byte i = 1, v, ticket, k;
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
