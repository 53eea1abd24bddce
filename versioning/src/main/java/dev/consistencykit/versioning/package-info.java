/**
 * Pattern 5, versioned documents: a change too large for one document (a tree, a catalogue, a configuration spread
 * over many documents) is written as new version documents of its items, then committed by one compare-and-set on
 * the root document; readers read the root's version and only the item versions it commits, so they see a whole
 * committed version or nothing of a change.
 *
 * <h2>The design, and why it is isolated exactly</h2>
 * <ul>
 *   <li><b>Version numbers are commit numbers.</b> A root starts at version 0; every commit moves it from its base
 *   {@code b} to {@code b + 1}, so the committed versions are exactly 0, 1, 2… Every writer on base {@code b} writes
 *   its item documents at {@code b + 1}: several writers can hold the same number at once, and at most one of them
 *   commits it.</li>
 *   <li><b>Every write attempt has its own identity</b>, a fresh ObjectId ({@code att}) stored in each item document
 *   it writes, and in its {@code _id}, {@code {r: root, i: item, v: version, a: att}}, which the primary key keeps
 *   unique (a version record is one by {@code {r: root, v: version}} the same way). A version number alone never
 *   tells which documents are committed; the pair (version, attempt) does.</li>
 *   <li><b>Staging</b> (round trip 1) is one conditional update of the root: only if the root is still at the base
 *   version and no attempt of the same change set is staged or unsettled, it records the attempt under
 *   {@code pending.<slot>} (the slot is a hash of the change set id; the entry holds the id, the attempt, the base,
 *   the item count and a fingerprint of the content; the server time goes to {@code pendingAt.<slot>}). A stale or
 *   future base, a missing root, a retry of a committed change set and a reused id are answered from this one
 *   write, which then changed nothing.</li>
 *   <li><b>Writing</b> (round trip 2) inserts the item documents: new values, and tombstones for deletes.</li>
 *   <li><b>Commit</b> (round trip 3) is one compare-and-set on the root: version still the base, and this attempt
 *   still staged. It sets the version, removes the attempt from {@code pending}, and records
 *   {@code unsettled.<slot> = {v: N, att, …}}: version N is the documents of that attempt. The loser of a race, and
 *   any attempt abandoned by recovery, can never pass it again.</li>
 *   <li><b>Committing without staging</b> ({@link VersionedStore#update}, whose change set id is its own, so nobody
 *   can have used it): the read that made the change set gave the root's version and its {@code fence}; the item
 *   documents are written (marked {@code direct}), then one compare-and-set on the root — version still the base,
 *   fence unmoved, no attempt of that change set staged or unsettled — commits them: three round trips with
 *   the read. A writer that goes quiet before its compare-and-set leaves documents no reader counts; clean-up deletes
 *   them once the root moved past their base, or, if it did not, once their writer was quiet for {@code staleAfter}:
 *   then it first moves the root's fence on (a compare-and-set on fence and version), so that writer can never
 *   commit them. The fence is on the root and only ever moves forward: nothing removes the evidence.</li>
 *   <li><b>The tree on the root</b>: a compare-and-set whose writer knows the base tree (the read of a direct commit,
 *   or the root its stage returned while the root carried that tree) also writes the tree it commits, whole
 *   ({@code tree}), what it replaced ({@code undo}), the base's meta and time ({@code prior}), and the version they
 *   describe ({@code treeV}), while they fit in {@link VersionedStoreConfig#inlineTreeBytes()}; every other commit
 *   removes them. A reader uses them only while {@code treeV} is the root's version: the current tree, and the one
 *   before it with {@code undo} put back, are then one document read by {@code _id}, which no writer or pruner can
 *   split. A root that carries no tree is read as below, one round trip later.</li>
 *   <li><b>Reading</b> (one round trip, one aggregation): the root gives version V and its {@code unsettled} map;
 *   then, in the same pipeline, a {@code $lookup} takes the item documents at or below V that no committed version at
 *   or below V replaced, and a last {@code $lookup} reads the root's floor again. A document
 *   counts only if it is marked {@code committed}, or its (version, attempt) is the one {@code unsettled} names.
 *   Everything else, a loser's or a crashed writer's documents at any number, even at a number that was later
 *   committed by someone else, is ignored: the naive scheme ("write at root+1, then compare-and-set") exposes
 *   exactly those documents once a later commit moves the root past them.</li>
 *   <li><b>Settling</b> (maintenance, off the commit path) marks the documents of committed versions
 *   {@code committed: true}, stamps each replaced document with {@code until} (the version that replaced it, so
 *   reads skip history), writes one record per version to the history collection, and only then removes the
 *   version from {@code unsettled}. A reader holding an older root still finds every committed document: the mark
 *   comes before the removal. The writer whose commit leaves {@link VersionedStoreConfig#settleThreshold()} versions
 *   unsettled settles them itself, so a root stays small when nobody runs maintenance.</li>
 *   <li><b>Abandoning</b> removes the attempt from {@code pending} (a compare-and-set on its attempt id), then
 *   deletes its documents. A paused writer that wakes up later can still insert documents, but never commit them:
 *   they are never marked, never named by {@code unsettled}, so no reader counts them, and cleanup deletes
 *   them.</li>
 *   <li><b>Recovery</b> takes a staged attempt whose owner went quiet (server time): if the root is still at its base
 *   and all its documents are written, it commits it with the writer's own compare-and-set; otherwise it abandons it.
 *   Both decisions are compare-and-sets on the root, so a writer and any number of recoverers agree.</li>
 *   <li><b>Retention</b> raises the root's {@code floor}, then deletes documents replaced at or below it, and
 *   committed tombstones at or below it. Time travel below the floor answers {@link VersionPrunedException}; a
 *   read takes the floor again after its items (the last stage of its aggregation, run on the server after the item
 *   stage for the same root), so a concurrent prune can never give it a partial answer. The root is then marked
 *   {@code pruned} to the floor; a prune pass takes up again every root whose mark is below its floor (a pruner died
 *   between the two, or a late settler wrote version records below the floor and set the mark back, counting it in
 *   {@code lateRecords}, which a pruner's mark requires unchanged since it read the root).</li>
 * </ul>
 * <p>Nothing depends on clocks: server time only decides when recovery may take a staged attempt over, or clean-up
 * fence a quiet direct writer off, and doing either early is safe (the writer gets a conflict).
 */
package dev.consistencykit.versioning;
