(* The law of k drafts without replacement, as ordered k-tuples, and alpha* for
   it: docs/theory.md, Theorem 2.7 with Theorem 2.2.

   A k-tuple t = (t_1, ..., t_k) is drawn without replacement from q:
     D(t) = prod_i  q(t_i) / q(Omega \ {t_1, ..., t_{i-1}})
   (0 when a token repeats).  Its set law is the recursion (R) of
   WithoutReplacement.v: D(set(t) \subset S) = g k S Omega ([wor_Dsub]); when at
   least k tokens have q > 0 the law sums to 1 ([wor_law_sum1]).  With strong
   duality (Duality.v) and the prefix theorem (WithoutReplacement.v), alpha* for
   k drafts without replacement is the minimum over the n + 1 prefixes of the p/q
   order of P_j + 1 - D(set \subset S_j) ([wor_alpha_star]). *)
From mathcomp Require Import all_ssreflect all_algebra.
From OptAccept Require Import Gale Duality SortedPrefixes WithoutReplacement.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Tuples.

Variables (R : realFieldType) (T : finType).

Lemma sum_tuple_cons k (F : k.+1.-tuple T -> R) :
  \sum_t F t = \sum_z \sum_(t : k.-tuple T) F [tuple of z :: t].
Proof.
rewrite pair_bigA (reindex (fun p : T * k.-tuple T => [tuple of p.1 :: p.2])) //.
apply: onW_bij; exists (fun t : k.+1.-tuple T => (thead t, [tuple of behead t])).
  by move=> [z t] /=; congr pair; apply: val_inj.
by move=> t; apply: val_inj; case/tupleP: t.
Qed.

Lemma sum_tuple0 (P : pred (0.-tuple T)) (F : 0.-tuple T -> R) :
  P [tuple] -> \sum_(t | P t) F t = F [tuple].
Proof.
move=> P0; rewrite (big_pred1 ([tuple] : 0.-tuple T)) // => t.
by rewrite (tuple0 t) P0; apply/esym/eqP.
Qed.

End Tuples.

Section WorLaw.

Variables (R : realFieldType) (T : finType) (q : T -> R).
Hypothesis q_ge0 : forall y, 0 <= q y.

(* the probability of drawing the sequence s, in order, without replacement from U *)
Fixpoint wprob (U : {set T}) (s : seq T) : R :=
  if s is z :: s' then (if z \in U then q z / qm q U else 0) * wprob (U :\ z) s' else 1.

(* the law of k drafts without replacement from q, as ordered k-tuples,
   and the set of drafted tokens *)
Definition wor_law k (t : k.-tuple T) := wprob setT t.
Definition tuple_draft k (t : k.-tuple T) : {set T} := [set x in t].

Lemma wprob_ge0 (U : {set T}) s : 0 <= wprob U s.
Proof.
elim: s U => [|z s IH] U /=; first exact: ler01.
by rewrite mulr_ge0 //; case: ifP => _; rewrite ?divr_ge0 ?qm_ge0.
Qed.

(* a sequence with a token outside U has probability 0 *)
Lemma wprob_out (U : {set T}) (s : seq T) z : z \in s -> z \notin U -> wprob U s = 0.
Proof.
elim: s U => [|a s IH] U //=; rewrite inE => /orP [/eqP <-|zs] zU.
  by rewrite (negbTE zU) mul0r.
by rewrite (IH (U :\ a)) ?mulr0 // !inE negb_and zU orbT.
Qed.

(* the set law: D(set(t) \subset S) = g k S U, the recursion (R) *)
Lemma wor_Dsub_gen k (S U : {set T}) : S \subset U ->
  \sum_(t : k.-tuple T | [set x in t] \subset S) wprob U t = g q k S U.
Proof.
elim: k S U => [|k IH] S U SU.
  by rewrite sum_tuple0 //=; apply/subsetP => x; rewrite inE.
rewrite big_mkcond sum_tuple_cons /= [RHS]big_mkcond; apply: eq_bigr => z _.
case: (boolP (z \in S)) => zS; last first.
  rewrite big1 // => t _; case: ifP => // /subsetP h.
  by case/negP: zS; apply: h; rewrite inE mem_head.
rewrite (subsetP SU) // -IH; last exact: setSD.
rewrite mulr_sumr [RHS]big_mkcond; apply: eq_bigr => t _.
have -> : ([set x in [tuple of z :: t]] \subset S) = ([set x in t] \subset S).
  apply/subsetP/subsetP => h x; first by rewrite inE => xt; apply: h; rewrite !inE xt orbT.
  by rewrite !inE => /orP [/eqP ->|xt]; [|apply: h; rewrite inE].
case: (boolP ([set x in t] \subset S :\ z)) => h1.
  by rewrite (subset_trans h1) ?subsetDl.
case: ifP => // h2; rewrite (@wprob_out _ _ z) ?mulr0 ?setD11 //.
apply: contraR h1 => zt; apply/subsetP => x; rewrite !inE => xt.
rewrite (subsetP h2) ?andbT; last by rewrite inE.
by apply: contraNneq zt => <-.
Qed.

Lemma wor_Dsub k S : Dsub (@wor_law k) (@tuple_draft k) S = g q k S setT.
Proof. exact: wor_Dsub_gen (subsetT S). Qed.

(* with at least k tokens of U of positive mass, k draws from U are always possible *)
Lemma g_full k (U : {set T}) : (k <= #|[set z in U | (q z != 0%R)]|)%N -> g q k U U = 1.
Proof.
elim: k U => [//|k IH] U hk /=.
have [z zU] : exists z, z \in [set z in U | (q z != 0%R)].
  by apply/set0Pn; rewrite -card_gt0; apply: leq_trans hk.
have Upos : 0 < qm q U.
  move: zU; rewrite inE => /andP [zU qz].
  apply: lt_le_trans (_ : 0 < q z) _; first by rewrite lt_def qz q_ge0.
  have h := @qm_sub _ _ q q_ge0 [set z] U; rewrite /qm big_set1 in h; apply: h.
  by rewrite sub1set.
rewrite (eq_bigr (fun z => q z / qm q U)) => [|t tU].
  by rewrite -mulr_suml divff // gt_eqF.
case: (eqVneq (q t) 0) => [->|qt]; first by rewrite !mul0r.
rewrite IH ?mulr1 //.
have -> : [set z in U :\ t | (q z != 0%R)] = [set z in U | (q z != 0%R)] :\ t.
  by apply/setP => x; rewrite !inE andbA.
move: hk; rewrite (cardsD1 t) inE tU qt /= add1n ltnS.
by [].
Qed.

Lemma wor_law_ge0 k (t : k.-tuple T) : 0 <= wor_law t.
Proof. exact: wprob_ge0. Qed.

Lemma wor_law_sum1 k : qm q setT = 1 -> (k <= #|[set z | (q z != 0%R)]|)%N ->
  \sum_t @wor_law k t = 1.
Proof.
move=> q1 hk; have := wor_Dsub k setT; rewrite /Dsub (eq_bigl xpredT) => [->|t].
  by rewrite g_full //; apply: leq_trans hk _; apply: subset_leq_card;
    apply/subsetP => x; rewrite !inE.
by rewrite subsetT.
Qed.

End WorLaw.

Section WorAlphaStar.

Variables (R : realFieldType) (n k : nat) (p q : 'I_n -> R).
Hypotheses (p_ge0 : forall i, 0 <= p i) (q_ge0 : forall i, 0 <= q i).
Hypotheses (p_sum1 : \sum_i p i = 1) (q_sum1 : \sum_i q i = 1).
(* at least k tokens have q > 0, so that k distinct tokens can be drawn *)
Hypothesis q_support : (k <= #|[set i | (q i != 0%R)]|)%N.
Hypothesis sorted : forall i j : 'I_n, (i < j)%N -> p i * q j <= p j * q i.

(* alpha* for k drafts without replacement (docs/theory.md, Theorem 2.7 with
   Theorem 2.2): an optimal coupling exists and its acceptance is the minimum over
   j = 0..n of P_j + 1 - D_without(set \subset S_j), S_j the first j tokens *)
Theorem wor_alpha_star : exists pi, exists j : 'I_n.+1,
  [/\ is_coupling p (@wor_law _ _ q k) pi,
      forall pi', is_coupling p (@wor_law _ _ q k) pi' ->
        acceptance (@tuple_draft _ k) pi' <= acceptance (@tuple_draft _ k) pi,
      acceptance (@tuple_draft _ k) pi = wor_value k p q (prefix n j)
    & forall j' : 'I_n.+1, acceptance (@tuple_draft _ k) pi <= wor_value k p q (prefix n j')].
Proof.
have q1 : qm q setT = 1.
  by rewrite /qm -q_sum1; apply: eq_bigl => i; rewrite inE.
have [pi [S [hpi opt Smin accE]]] :=
  strong_duality_star (@tuple_draft _ k) p_ge0 p_sum1 (@wor_law_ge0 _ _ q q_ge0 k)
    (wor_law_sum1 q_ge0 q1 q_support).
have cutE S' : cut p (@wor_law _ _ q k) (@tuple_draft _ k) S' = wor_value k p q S'.
  by rewrite /cut wor_Dsub.
have [j hj] := wor_sorted_prefixes_min k p_ge0 q_ge0 sorted.
have accj : acceptance (@tuple_draft _ k) pi = wor_value k p q (prefix n j).
  have e : wor_value k p q (prefix n j) =
           cut p (@wor_law _ _ q k) (@tuple_draft _ k) (prefix n j) by rewrite cutE.
  by apply/le_anti; rewrite accE e Smin /= !cutE hj.
exists pi, j; split=> // j'; rewrite accj.
exact: (hj (prefix n j')).
Qed.

End WorAlphaStar.

Print Assumptions wor_Dsub.
Print Assumptions wor_law_sum1.
Print Assumptions wor_alpha_star.
