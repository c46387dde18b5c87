(* The coupling form of the optimal acceptance, weak duality of the dual (star)
   and the K-draft condition.

   Drafts are outcomes x of any finite type X (ordered k-tuples of tokens, or any
   richer draft record) with law D; each outcome carries its set of drafted
   tokens [draft x] (set(x-bar) in docs/theory.md).  A verifier is a coupling
   pi of D and the target law p (docs/theory.md section 2); its acceptance is
   P(Y in set(x-bar)).  The dual (star) of docs/theory.md, Theorem 2.2, reads
     alpha*(p, D) = min over S of  p(S) + 1 - D(set(x-bar) \subset S).
   This file proves the inequality <= for every coupling and every S (weak
   duality), and the K-draft condition of Theorem 4.1 in both directions, the
   converse under the hypothesis that strong duality holds for (p, D). *)
From mathcomp Require Import all_ssreflect all_algebra.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Duality.

Variables (R : realFieldType) (T X : finType).
Variables (p : T -> R) (D : X -> R) (draft : X -> {set T}).
Hypotheses (p_ge0 : forall y, 0 <= p y) (p_sum1 : \sum_y p y = 1).
Hypotheses (D_ge0 : forall x, 0 <= D x) (D_sum1 : \sum_x D x = 1).

(* pi is a coupling of the draft law D and the target law p *)
Definition is_coupling (pi : X -> T -> R) :=
  [/\ forall x y, 0 <= pi x y,
      forall x, \sum_y pi x y = D x
    & forall y, \sum_x pi x y = p y].

(* P(Y in set(x-bar)) under pi *)
Definition acceptance (pi : X -> T -> R) := \sum_x \sum_(y in draft x) pi x y.

Definition pmass (S : {set T}) := \sum_(y in S) p y.

(* D(set(x-bar) \subset S) *)
Definition Dsub (S : {set T}) := \sum_(x | draft x \subset S) D x.

(* the value of S in (star) *)
Definition cut (S : {set T}) := pmass S + 1 - Dsub S.

Lemma cutE S : cut S = pmass S + \sum_(x | ~~ (draft x \subset S)) D x.
Proof.
rewrite /cut /Dsub -D_sum1 (bigID (fun x => draft x \subset S)) /=.
set a := \sum_(x | _) D x; set b := \sum_(x | _) D x.
by rewrite (addrC a) addrA addrK.
Qed.

(* weak duality of (star).  For every coupling of the drafts and the
   output and every token set S, P(Y in set(x-bar)) <= p(S) + 1 - D(set \subset S). *)
Theorem weak_duality pi S : is_coupling pi -> acceptance pi <= cut S.
Proof.
case=> pi_ge0 rowE colE.
have splitE : acceptance pi =
    \sum_x \sum_(y in draft x | y \in S) pi x y
  + \sum_x \sum_(y in draft x | y \notin S) pi x y.
  rewrite /acceptance -big_split /=; apply: eq_bigr => x _.
  exact: (bigID (fun y => y \in S)).
rewrite splitE cutE; apply: ler_add.
  have -> : pmass S = \sum_x \sum_(y in S) pi x y.
    by rewrite exchange_big /=; apply: eq_bigr => y _; rewrite colE.
  apply: ler_sum => x _.
  rewrite [X in X <= _]big_mkcond [X in _ <= X]big_mkcond /=.
  apply: ler_sum => y _.
  by case: (y \in draft x); case: (y \in S); rewrite ?lexx ?pi_ge0.
rewrite [X in _ <= X]big_mkcond /=; apply: ler_sum => x _.
case: ifP => hsub.
  rewrite -rowE [X in X <= _]big_mkcond /=; apply: ler_sum => y _.
  by case: ifP; rewrite ?lexx ?pi_ge0.
rewrite big_pred0 // => y.
move/negbFE/subsetP: hsub => hsub.
by apply/negbTE; case: (boolP (y \in draft x)) => //= /hsub ->.
Qed.

Lemma acceptance_le1 pi : is_coupling pi -> acceptance pi <= 1.
Proof.
move=> hpi; have := weak_duality setT hpi.
suff -> : cut setT = 1 by [].
rewrite cutE big_pred0 ?addr0 => [|x]; last by rewrite subsetT.
by rewrite /pmass -p_sum1; apply: eq_bigl => y; rewrite inE.
Qed.

(* The K-draft condition, necessity: if some lossless verifier always accepts (alpha* = 1),
   then p(S) >= D(set \subset S) for every S. *)
Theorem kdraft_necessary pi :
  is_coupling pi -> acceptance pi = 1 -> forall S, Dsub S <= pmass S.
Proof.
move=> hpi acc1 S; have := weak_duality S hpi.
by rewrite acc1 /cut addrAC ler_addr subr_ge0.
Qed.

(* strong duality of (star) for (p, D): some coupling attains the value of some S
   (with weak duality, the coupling is then optimal and S minimal) *)
Definition strong_duality :=
  exists pi, is_coupling pi /\ exists S, acceptance pi = cut S.

(* The K-draft condition, sufficiency, given strong duality as a hypothesis: if
   p(S) >= D(set \subset S) for every S then a lossless verifier accepts with
   probability 1. *)
Theorem kdraft_sufficient :
  strong_duality -> (forall S, Dsub S <= pmass S) ->
  exists pi, is_coupling pi /\ acceptance pi = 1.
Proof.
move=> [pi [hpi [S accE]]] cond; exists pi; split=> //.
apply/le_anti; rewrite acceptance_le1 //= accE.
by rewrite /cut addrAC ler_addr subr_ge0.
Qed.

(* Both directions together: under strong duality, alpha* = 1 iff the K-draft
   condition holds for every S (docs/theory.md, Theorem 4.1). *)
Theorem kdraft_condition :
  strong_duality ->
  (exists pi, is_coupling pi /\ acceptance pi = 1) <->
  (forall S, Dsub S <= pmass S).
Proof.
move=> sd; split; last exact: kdraft_sufficient.
by case=> pi [hpi acc1]; apply: kdraft_necessary acc1.
Qed.

End Duality.

Print Assumptions weak_duality.
Print Assumptions kdraft_necessary.
Print Assumptions kdraft_sufficient.
Print Assumptions kdraft_condition.
