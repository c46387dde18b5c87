(* Target-only verification (docs/theory.md section 5, rule 11, Proposition 5.1):
   walk the drafts in draw order; accept draft a with its probability under the
   current target law, and after each rejection remove a from the target law and
   renormalise; if every draft is rejected, draw the output from the final law.
   A token drafted twice has probability 0 the second time, so walking the tuple
   is walking its distinct tokens.  Proved here: for every draft tuple the output
   has law exactly p (so the rule is lossless for every draft law, including
   adaptive ones), and the probability that a draft is accepted is p(set(x-bar)),
   hence E_D[p(set(x-bar))] for a draft law D. *)
From mathcomp Require Import all_ssreflect all_algebra.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section TargetOnly.

Variables (R : realFieldType) (T : finType).

Definition is_law (p : T -> R) := (forall y, 0 <= p y) /\ \sum_y p y = 1.

(* the target law after rejecting a: a removed, renormalised *)
Definition restrict (p : T -> R) (a : T) : T -> R :=
  fun y => if y == a then 0 else p y / (1 - p a).

(* law of the output token given the draft tuple s (in draw order) *)
Fixpoint output (p : T -> R) (s : seq T) : T -> R :=
  if s is a :: s' then
    fun y => (if y == a then p a else 0) + (1 - p a) * output (restrict p a) s' y
  else p.

(* probability that some draft of s is accepted *)
Fixpoint accept (p : T -> R) (s : seq T) : R :=
  if s is a :: s' then p a + (1 - p a) * accept (restrict p a) s' else 0.

Lemma law_le1 p a : is_law p -> p a <= 1.
Proof.
case=> p_ge0 p_sum1; rewrite -p_sum1 (bigD1 a) //= ler_addl.
by apply: sumr_ge0 => y _; apply: p_ge0.
Qed.

Lemma law_one p a : is_law p -> p a = 1 -> forall y, y != a -> p y = 0.
Proof.
move=> [p_ge0 p_sum1] pa1 y ya.
have := p_sum1; rewrite (bigD1 a) //= pa1 -{2}(addr0 1) => /addrI.
by move/psumr_eq0P; apply=> // z _; apply: p_ge0.
Qed.

Lemma restrict_law p a : is_law p -> p a != 1 -> is_law (restrict p a).
Proof.
move=> hp pa1; have [p_ge0 p_sum1] := hp.
have pos : 0 < 1 - p a by rewrite subr_gt0 lt_def eq_sym pa1 law_le1.
split=> [y|].
  by rewrite /restrict; case: ifP => _ //; rewrite divr_ge0 // ltW.
rewrite (bigD1 a) //= /restrict eqxx add0r.
rewrite (eq_bigr (fun y => p y / (1 - p a))) => [|y /negbTE -> //].
rewrite -mulr_suml.
have -> : \sum_(y | y != a) p y = 1 - p a.
  by apply/eqP; rewrite eq_sym subr_eq -p_sum1 (bigD1 a) //= addrC.
by rewrite divff // gt_eqF.
Qed.

(* target-only verification is lossless, for every draft tuple. *)
Theorem target_only_lossless s p : is_law p -> forall y, output p s y = p y.
Proof.
elim: s p => [//|a s IH] p hp y /=.
have [pa1|pa1] := eqVneq (p a) 1.
  rewrite pa1 subrr mul0r addr0.
  by case: eqP => [->|/eqP ya]; rewrite ?pa1 // (law_one hp pa1 ya).
rewrite IH; last exact: restrict_law.
rewrite /restrict; case: eqP => [->|_]; first by rewrite mulr0 addr0.
by rewrite add0r mulrC divfK // subr_eq0 eq_sym.
Qed.

(* target-only verification accepts with probability p(set(x-bar)). *)
Theorem target_only_acceptance s p : is_law p -> accept p s = \sum_(y in s) p y.
Proof.
elim: s p => [|a s IH] p hp /=.
  by rewrite big_pred0.
rewrite (bigD1 a) ?mem_head //=.
have [pa1|pa1] := eqVneq (p a) 1.
  rewrite pa1 subrr mul0r big1 // => y /andP [_ ya].
  exact: law_one hp pa1 y ya.
rewrite IH; last exact: restrict_law.
congr (_ + _).
rewrite (bigID (fun y => y == a)) /= big1 ?add0r => [|y /andP [_ /eqP ->]];
  last by rewrite /restrict eqxx.
rewrite (eq_bigr (fun y => p y / (1 - p a))) => [|y /andP [_ /negbTE ya]];
  last by rewrite /restrict ya.
rewrite -mulr_suml mulrC divfK ?subr_eq0 1?eq_sym //.
by apply: eq_bigl => y; rewrite in_cons; case: (y == a); rewrite ?andbF ?andbT.
Qed.

(* One draft: lossless, and accepts draft a with probability p a. *)
Corollary target_only_one_draft p a : is_law p ->
  accept p [:: a] = p a /\ forall y, output p [:: a] y = p y.
Proof.
move=> hp; split; last exact: target_only_lossless.
by rewrite target_only_acceptance // (big_pred1 a) // => y; rewrite inE.
Qed.

(* Over any draft law D on outcomes X, each outcome giving its tuple [tup x]:
   the output has law p and the acceptance is E_D[p(set(x-bar))]. *)
Section DraftLaw.

Variables (X : finType) (D : X -> R) (tup : X -> seq T).
Hypothesis D_sum1 : \sum_x D x = 1.

Theorem target_only_lossless_law p : is_law p ->
  forall y, \sum_x D x * output p (tup x) y = p y.
Proof.
move=> hp y; rewrite (eq_bigr (fun x => D x * p y)) => [|x _].
  by rewrite -mulr_suml D_sum1 mul1r.
by rewrite target_only_lossless.
Qed.

Theorem target_only_acceptance_law p : is_law p ->
  \sum_x D x * accept p (tup x) = \sum_x D x * \sum_(y in tup x) p y.
Proof.
by move=> hp; apply: eq_bigr => x _; rewrite target_only_acceptance.
Qed.

End DraftLaw.

End TargetOnly.

Print Assumptions target_only_lossless.
Print Assumptions target_only_acceptance.
Print Assumptions target_only_one_draft.
Print Assumptions target_only_lossless_law.
Print Assumptions target_only_acceptance_law.
