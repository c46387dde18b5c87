(* docs/theory.md, Lemma 2.3 (sorted prefixes suffice; Hu et al., ICLR 2025,
   arXiv:2502.18779, section 4, for i.i.d. drafts).

   Tokens are 0, ..., n-1 (the ordinal type 'I_n), already sorted by p/q
   ascending with the tokens of q = 0 (and p > 0) last: for i < j,
       p i * q j <= p j * q i                                     [sorted]
   (for q i, q j > 0 this is p i / q i <= p j / q j; ties in any order).
   If D(set \subset S) = phi(q(S)) for a function phi that is convex on [0, 1]
   (three-point form [phi_convex]; no monotonicity is needed), then the minimum
   over all token sets S of
       F(S) = p(S) + 1 - phi(q(S))                   (the value of S in (star))
   is attained at a prefix {0, ..., j-1}, j = 0, ..., n ([sorted_prefixes_min]).
   For i.i.d. drafts phi(t) = t^k, which is convex on [0, 1] ([pow_convex]);
   IIDPrefixes.v puts the two together with strong duality.

   The proof is by exchange, not the concave extension of docs/theory.md: if S is
   not a prefix, let x be the first token not in S and y the last token of S
   (x < y).  Then F(S + x) <= F(S) or F(S - y) <= F(S): otherwise
     p x > phi(Q + a) - phi(Q)   and   p y < phi(Q) - phi(Q - b)
   (Q = q(S), a = q x, b = q y), and with convexity
     (phi(Q) - phi(Q - b)) * a <= (phi(Q + a) - phi(Q)) * b
   this gives p x * b > p y * a, against [sorted].  Both moves remove an
   inversion (a token outside S before a token of S) and add none. *)
From mathcomp Require Import all_ssreflect all_algebra.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Exchange.

Variable R : realFieldType.

Lemma exchange_aux (px py a b dp dm : R) :
  0 < a -> 0 < b -> px * b <= py * a -> dm * a <= dp * b ->
  (px <= dp) || (dm <= py).
Proof.
move=> a0 b0 hs hc; case: (lerP px dp) => //= h1; rewrite leNgt; apply/negP => h2.
have c1 : py * a < dm * a by rewrite ltr_pmul2r.
have c2 : dp * b < px * b by rewrite ltr_pmul2r.
have c3 := lt_trans (lt_le_trans c1 hc) c2.
by move: (lt_le_trans c3 hs); rewrite ltxx.
Qed.

End Exchange.

Section PrefixExchange.

(* any set function G(S) = D(set \subset S); the tokens 0..n-1 in the order to scan *)
Variables (R : realFieldType) (n : nat) (p : 'I_n -> R) (G : {set 'I_n} -> R).

(* the value of S in (star) *)
Definition Fv (S : {set 'I_n}) := \sum_(i in S) p i + 1 - G S.

(* the exchange property: for x before y, x outside S and y in S, adding x or
   removing y does not increase the value *)
Hypothesis exch : forall (S : {set 'I_n}) (x y : 'I_n),
  x \notin S -> y \in S -> (x < y)%N ->
  (p x <= G (x |: S) - G S) || (G S - G (S :\ y) <= p y).

(* the first j tokens *)
Definition prefix (j : nat) : {set 'I_n} := [set i : 'I_n | (i < j)%N].

(* inversions: a token outside S before a token of S *)
Definition inv (S : {set 'I_n}) : {set 'I_n * 'I_n} :=
  [set ij | [&& ij.1 \notin S, ij.2 \in S & (ij.1 < ij.2)%N]].

Lemma prefix_closed S : inv S = set0 -> exists j : 'I_n.+1, prefix j = S.
Proof.
move=> h0.
have noinv i j : i \notin S -> j \in S -> (i < j)%N -> False.
  move=> iS jS ij; have : (i, j) \in inv S by rewrite inE /= iS jS ij.
  by rewrite h0 inE.
pose m := (\max_(i in S) (nat_of_ord i).+1)%N.
have mn : (m < n.+1)%N by rewrite ltnS; apply/bigmax_leqP => i _; exact: ltn_ord.
exists (Ordinal mn); apply/setP => i; rewrite inE /=.
apply/idP/idP => [im|iS]; last by rewrite /m (bigD1 i) //= leq_maxl.
apply/negPn/negP => iS.
suff : (m <= i)%N by rewrite leqNgt im.
apply/bigmax_leqP => k kS; rewrite ltn_neqAle; apply/andP; split.
  by apply: contraNneq iS => /val_inj <-.
by rewrite leqNgt; apply/negP => /(noinv _ _ iS kS).
Qed.

Lemma exchange S : inv S != set0 ->
  exists S', (#|inv S'| < #|inv S|)%N /\ Fv S' <= Fv S.
Proof.
case/set0Pn => -[i0 j0]; rewrite inE /= => /and3P [i0S j0S i0j0].
case: (@arg_minnP _ i0 (fun i => i \notin S) (fun i : 'I_n => nat_of_ord i) i0S) => x xS xmin.
case: (@arg_maxnP _ j0 (fun i => i \in S) (fun i : 'I_n => nat_of_ord i) j0S) => y yS ymax.
have xy : (x < y)%N.
  by apply: leq_ltn_trans (xmin _ i0S) _; apply: leq_trans i0j0 (ymax _ j0S).
have xyinv : (x, y) \in inv S by rewrite inE /= xS yS xy.
(* adding x or removing y removes the inversion (x, y) and adds none *)
have invU : inv (x |: S) \proper inv S.
  apply/properP; split; last by exists (x, y) => //; rewrite inE /= setU11.
  apply/subsetP => -[i j]; rewrite !inE /= negb_or => /and3P [/andP [ix iS] jS ij].
  rewrite iS ij andbT /=; case/orP: jS => // /eqP jx.
  by move: (xmin _ iS); rewrite -jx leqNgt ij.
have invD : inv (S :\ y) \proper inv S.
  apply/properP; split; last by exists (x, y) => //; rewrite !inE /= eq_refl andbF.
  apply/subsetP => -[i j]; rewrite !inE /= negb_and negbK => /and3P [iS /andP [jy jS] ij].
  rewrite jS ij !andbT /=; case/orP: iS => // /eqP iy.
  by move: (ymax _ jS); rewrite /geq /= -iy leqNgt ij.
have step := exch xS yS xy.
have aux1 (P px Q1 Q2 : R) : px <= Q1 - Q2 -> px + P + 1 - Q1 <= P + 1 - Q2.
  move=> h; rewrite -[px + P + 1]addrA [px + (P + 1)]addrC -addrA ler_add2l.
  by rewrite ler_subl_addr addrC.
have aux2 (P py Q1 Q2 : R) : Q1 - Q2 <= py -> P + 1 - Q2 <= py + P + 1 - Q1.
  move=> h; rewrite -(addrA py) [py + (P + 1)]addrC -[P + 1 + py - Q1]addrA ler_add2l.
  by rewrite ler_subr_addr addrC.
case/orP: step => h.
  exists (x |: S); split; first exact: (proper_card invU).
  by rewrite /Fv big_setU1 //=; apply: aux1.
exists (S :\ y); split; first exact: (proper_card invD).
by rewrite /Fv (big_setD1 y yS) /=; apply: aux2.
Qed.

Lemma prefix_exchange_rec m S : (#|inv S| <= m)%N -> exists j : 'I_n.+1, Fv (prefix j) <= Fv S.
Proof.
elim: m S => [|m IH] S hS.
  have [j <-] : exists j : 'I_n.+1, prefix j = S.
    by apply: prefix_closed; apply/eqP; rewrite -cards_eq0 -leqn0.
  by exists j.
case: (eqVneq (inv S) set0) => [/prefix_closed [j <-]|hS0]; first by exists j.
have [S' [lt le]] := exchange hS0.
have [j hj] : exists j : 'I_n.+1, Fv (prefix j) <= Fv S'.
  by apply: IH; rewrite -ltnS (leq_trans lt hS).
by exists j; apply: le_trans hj le.
Qed.

(* under the exchange property, every set is matched or beaten by a prefix, and the
   minimum of (star) over all sets is attained at a prefix *)
Theorem prefix_exchange S : exists j : 'I_n.+1, Fv (prefix j) <= Fv S.
Proof. exact: (@prefix_exchange_rec #|inv S|). Qed.

Theorem prefix_exchange_min : exists j : 'I_n.+1, forall S, Fv (prefix j) <= Fv S.
Proof.
have [S _ Smin] := arg_minP Fv (erefl true : xpredT (setT : {set 'I_n})).
have [j hj] := prefix_exchange S.
by exists j => S'; apply: le_trans hj (Smin S' isT).
Qed.

End PrefixExchange.

Section SortedPrefixes.

Variables (R : realFieldType) (n : nat) (p q : 'I_n -> R) (phi : R -> R).
Hypotheses (p_ge0 : forall i, 0 <= p i) (q_ge0 : forall i, 0 <= q i).
Hypothesis q_sum1 : \sum_i q i = 1.
(* the tokens are sorted by p/q ascending, the tokens with q = 0 < p last *)
Hypothesis sorted : forall i j : 'I_n, (i < j)%N -> p i * q j <= p j * q i.
(* phi is convex on [0, 1]: for u <= v <= w in [0, 1], the slope of phi on [u, v]
   is at most its slope on [v, w] (multiplied out) *)
Hypothesis phi_convex : forall u v w, 0 <= u -> u <= v -> v <= w -> w <= 1 ->
  (phi v - phi u) * (w - v) <= (phi w - phi v) * (v - u).

(* the value of S in (star) when D(set \subset S) = phi(q(S)) *)
Definition F (S : {set 'I_n}) := \sum_(i in S) p i + 1 - phi (\sum_(i in S) q i).

Lemma q_le1 (S : {set 'I_n}) : \sum_(i in S) q i <= 1.
Proof.
rewrite -q_sum1 [X in _ <= X](bigID (mem S)) /= ler_addl.
by apply: sumr_ge0 => i _.
Qed.

Lemma phi_exchange (S : {set 'I_n}) (x y : 'I_n) :
  x \notin S -> y \in S -> (x < y)%N ->
  (p x <= phi (\sum_(i in x |: S) q i) - phi (\sum_(i in S) q i)) ||
  (phi (\sum_(i in S) q i) - phi (\sum_(i in S :\ y) q i) <= p y).
Proof.
move=> xS yS xy.
set Q := \sum_(i in S) q i.
have eU : \sum_(i in x |: S) q i = Q + q x by rewrite big_setU1 //= addrC.
have eD : \sum_(i in S :\ y) q i = Q - q y.
  by rewrite /Q (big_setD1 y yS) /= addrC addKr.
rewrite eU eD.
have [b0|b0] := eqVneq (q y) 0; first by rewrite b0 subr0 subrr p_ge0 orbT.
have qy0 : 0 < q y by rewrite lt_def b0 q_ge0.
have [a0|a0] := eqVneq (q x) 0.
  have := sorted xy; rewrite a0 mulr0 => h.
  have : p x <= 0 by rewrite -(ler_pmul2r qy0) mul0r.
  by rewrite addr0 subrr => ->.
apply: (@exchange_aux _ _ _ (q x) (q y)); [by rewrite lt_def a0 q_ge0|exact: qy0|exact: sorted xy|].
have e1 : Q + q x - Q = q x by rewrite addrC addKr.
have e2 : Q - (Q - q y) = q y by rewrite opprB addrC subrK.
have h := @phi_convex (Q - q y) Q (Q + q x); rewrite e1 e2 in h; apply: h.
- by rewrite -eD; apply: sumr_ge0.
- by rewrite ler_subl_addr ler_addl.
- by rewrite ler_addl.
- by rewrite -eU; apply: q_le1.
Qed.

Lemma FE S : F S = Fv p (fun S => phi (\sum_(i in S) q i)) S.
Proof. by []. Qed.

(* docs/theory.md, Lemma 2.3: every token set S is matched or beaten by a prefix of
   the p/q order, F(prefix j) <= F(S) ... *)
Theorem sorted_prefixes S : exists j : 'I_n.+1, F (prefix n j) <= F S.
Proof. exact: (prefix_exchange (G := fun S => phi (\sum_(i in S) q i)) phi_exchange). Qed.

(* ... so the minimum of (star) over all 2^n sets is attained at one of the n + 1
   prefixes:  min over S of F(S) = min over j = 0..n of P_j + 1 - phi(Q_j). *)
Theorem sorted_prefixes_min : exists j : 'I_n.+1, forall S, F (prefix n j) <= F S.
Proof. exact: (prefix_exchange_min (G := fun S => phi (\sum_(i in S) q i)) phi_exchange). Qed.

End SortedPrefixes.

(* t^k is convex on [0, 1] (in fact on [0, +oo)) in the three-point form *)
Lemma pow_convex (R : realFieldType) (k : nat) (u v w : R) :
  0 <= u -> u <= v -> v <= w -> w <= 1 ->
  (v ^+ k - u ^+ k) * (w - v) <= (w ^+ k - v ^+ k) * (v - u).
Proof.
move=> u0 uv vw _; case: k => [|k]; first by rewrite !expr0 !subrr !mul0r.
have v0 : 0 <= v by apply: le_trans uv.
have w0 : 0 <= w by apply: le_trans vw.
have h : \sum_(i < k.+1) v ^+ (k - i) * u ^+ i <= \sum_(i < k.+1) w ^+ (k - i) * v ^+ i.
  apply: ler_sum => i _; apply: ler_pmul; rewrite ?exprn_ge0 //.
    by apply: ler_expn2r; rewrite ?nnegrE.
  by apply: ler_expn2r; rewrite ?nnegrE.
rewrite !subrXX mulrAC [X in _ <= X]mulrAC [(w - v) * (v - u)]mulrC.
by apply: ler_wpmul2l => //; apply: mulr_ge0; rewrite subr_ge0.
Qed.

Print Assumptions exchange_aux.
Print Assumptions prefix_exchange_min.
Print Assumptions sorted_prefixes.
Print Assumptions sorted_prefixes_min.
Print Assumptions pow_convex.
