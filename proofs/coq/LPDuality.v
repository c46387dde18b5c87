(* Exact certificates of the optimum of a linear program over the rationals.

   The LP is   max c.x   subject to   A x = b,  0 <= x <= u   (x in Q^n),
   the form in which optaccept solves the sequence-level LP of docs/trees.md, §4.
   A certificate is a primal point x and a dual pair (y, w): y free (one entry
   per row of A), w >= 0 (one per variable), with A^T y + w >= c.  [check]
   verifies by computation (vm_compute, in the standard library's Q) that x is
   feasible, that c.x = v and that b.y + u.w = v.  [lp_optimum] proves once that
   a certificate that passes [check] makes v the LP's optimum: x attains it and
   every feasible x' has c.x' <= v (weak duality:
   c.x' <= (A^T y + w).x' = y.(A x') + w.x' <= b.y + u.w). *)
From Coq Require Import QArith List.
Import ListNotations.

Local Open Scope Q_scope.

Fixpoint dot (s t : list Q) : Q :=
  match s, t with
  | a :: s', b :: t' => a * b + dot s' t'
  | _, _ => 0
  end.

Fixpoint vadd (s t : list Q) : list Q :=
  match s, t with
  | a :: s', b :: t' => (a + b) :: vadd s' t'
  | _, _ => []
  end.

(* A^T y for a matrix A given by its rows, each of length n *)
Fixpoint tmul (n : nat) (A : list (list Q)) (y : list Q) : list Q :=
  match A, y with
  | r :: A', a :: y' => vadd (map (Qmult a) r) (tmul n A' y')
  | _, _ => repeat 0 n
  end.

Definition rows (A : list (list Q)) (x : list Q) : list Q := map (fun r => dot r x) A.

(* the feasible set of the LP *)
Definition feasible (A : list (list Q)) (b u x : list Q) : Prop :=
  Forall2 (fun a ub => 0 <= a /\ a <= ub) x u /\ Forall2 Qeq (rows A x) b.

Fixpoint vleb (s t : list Q) : bool :=
  match s, t with
  | a :: s', b :: t' => Qle_bool a b && vleb s' t'
  | [], [] => true
  | _, _ => false
  end.

Fixpoint veqb (s t : list Q) : bool :=
  match s, t with
  | a :: s', b :: t' => Qeq_bool a b && veqb s' t'
  | [], [] => true
  | _, _ => false
  end.

Definition check (A : list (list Q)) (b c u x y w : list Q) (v : Q) : bool :=
  let n := length c in
  forallb (fun r => Nat.eqb (length r) n) A && Nat.eqb (length u) n &&
  Nat.eqb (length x) n && Nat.eqb (length w) n && Nat.eqb (length y) (length A) &&
  vleb (repeat 0 n) x && vleb x u && veqb (rows A x) b &&
  vleb (repeat 0 n) w && vleb c (vadd (tmul n A y) w) &&
  Qeq_bool (dot c x) v && Qeq_bool (dot y b + dot w u) v.

(* ---- computation and propositions *)

Lemma vlebP s t : vleb s t = true -> Forall2 Qle s t.
Proof.
revert t; induction s as [|a s IH]; intros [|b t]; simpl; try discriminate; auto.
intros h; apply andb_true_iff in h as [h1 h2].
constructor; [apply Qle_bool_iff; exact h1 | exact (IH t h2)].
Qed.

Lemma veqbP s t : veqb s t = true -> Forall2 Qeq s t.
Proof.
revert t; induction s as [|a s IH]; intros [|b t]; simpl; try discriminate; auto.
intros h; apply andb_true_iff in h as [h1 h2].
constructor; [apply Qeq_bool_iff; exact h1 | exact (IH t h2)].
Qed.

(* ---- algebra of dot products *)

Lemma dot_vadd s t x : length s = length t -> dot (vadd s t) x == dot s x + dot t x.
Proof.
revert t x; induction s as [|a s IH]; intros [|b t] [|z x] h; simpl in *;
  try discriminate; try ring.
injection h as h; rewrite (IH t x h); ring.
Qed.

Lemma dot_scale a s x : dot (map (Qmult a) s) x == a * dot s x.
Proof.
revert x; induction s as [|b s IH]; intros [|z x]; simpl; try ring.
rewrite IH; ring.
Qed.

Lemma dot_zero n x : dot (repeat 0 n) x == 0.
Proof.
revert x; induction n as [|n IH]; intros [|z x]; simpl; try ring.
rewrite IH; ring.
Qed.

Lemma length_vadd s t : length (vadd s t) = min (length s) (length t).
Proof.
revert t; induction s as [|a s IH]; intros [|b t]; simpl; auto.
Qed.

Lemma length_tmul n A y :
  Forall (fun r => length r = n) A -> length (tmul n A y) = n.
Proof.
revert y; induction A as [|r A IH]; intros [|a y] hA; simpl; try apply repeat_length.
pose proof (Forall_inv hA) as hr; pose proof (Forall_inv_tail hA) as hA'.
rewrite length_vadd, map_length, hr, (IH y hA'); apply Nat.min_id.
Qed.

(* (A^T y).x = y.(A x) *)
Lemma dot_tmul n A y x :
  Forall (fun r => length r = n) A -> length y = length A ->
  dot (tmul n A y) x == dot y (rows A x).
Proof.
revert y; induction A as [|r A IH]; intros [|a y] hA hy; simpl in *;
  try discriminate; try apply dot_zero.
pose proof (Forall_inv hA) as hr; pose proof (Forall_inv_tail hA) as hA'; injection hy as hy.
rewrite dot_vadd by (rewrite map_length, hr, (length_tmul _ _ y hA'); reflexivity).
rewrite dot_scale, (IH y hA' hy); ring.
Qed.

(* ---- monotonicity: both factors compared entrywise, the fixed one non-negative *)

Lemma dot_mono_l s t x :
  Forall2 Qle s t -> Forall (Qle 0) x -> dot s x <= dot t x.
Proof.
intros h; revert x; induction h as [|a b s t hab _ IH]; intros [|z x] hx; simpl;
  try apply Qle_refl.
pose proof (Forall_inv hx) as hz; pose proof (Forall_inv_tail hx) as hx'.
apply Qplus_le_compat; [|exact (IH x hx')].
apply Qmult_le_compat_r; assumption.
Qed.

Lemma dot_mono_r y s t :
  Forall (Qle 0) y -> Forall2 Qle s t -> dot y s <= dot y t.
Proof.
intros hy h; revert y hy; induction h as [|a b s t hab _ IH]; intros [|z y] hy; simpl;
  try apply Qle_refl.
pose proof (Forall_inv hy) as hz; pose proof (Forall_inv_tail hy) as hy'.
apply Qplus_le_compat; [|exact (IH y hy')].
rewrite (Qmult_comm z a), (Qmult_comm z b); apply Qmult_le_compat_r; assumption.
Qed.

Lemma dot_eq_r y s t : Forall2 Qeq s t -> dot y s == dot y t.
Proof.
intros h; revert y; induction h as [|a b s t hab _ IH]; intros [|z y]; simpl; try reflexivity.
rewrite hab, (IH y); reflexivity.
Qed.

Lemma Forall_le0 n x : vleb (repeat 0 n) x = true -> Forall (Qle 0) x.
Proof.
intros h; apply vlebP in h; revert n h; induction x as [|a x IH]; intros n h; constructor;
  destruct n; inversion h; subst; [assumption | exact (IH n ltac:(assumption))].
Qed.

(* ---- weak duality and the optimum *)

Theorem lp_weak_duality (A : list (list Q)) (b c u y w x : list Q) :
  Forall (fun r => length r = length c) A -> length y = length A ->
  length w = length c -> Forall (Qle 0) w ->
  Forall2 Qle c (vadd (tmul (length c) A y) w) ->
  feasible A b u x -> dot c x <= dot y b + dot w u.
Proof.
intros hA hy hw hw0 hc [hx heq].
assert (hx0 : Forall (Qle 0) x)
  by (clear -hx; induction hx as [|a ub x u [h _] _ IH]; constructor; assumption).
assert (hxu : Forall2 Qle x u)
  by (clear -hx; induction hx as [|a ub x u [_ h] _ IH]; constructor; assumption).
apply Qle_trans with (dot (vadd (tmul (length c) A y) w) x); [exact (dot_mono_l _ _ _ hc hx0)|].
rewrite dot_vadd by (rewrite (length_tmul _ _ _ hA), hw; reflexivity).
rewrite (dot_tmul _ _ _ _ hA hy), (dot_eq_r y _ _ heq).
apply Qplus_le_compat; [apply Qle_refl|exact (dot_mono_r _ _ _ hw0 hxu)].
Qed.

Theorem lp_optimum (A : list (list Q)) (b c u x y w : list Q) (v : Q) :
  check A b c u x y w v = true ->
  feasible A b u x /\ dot c x == v /\
  (forall x', feasible A b u x' -> dot c x' <= v).
Proof.
unfold check; intros h.
repeat match type of h with
  | (_ && _)%bool = true => apply andb_true_iff in h as [h ?]
  end.
rename h into hA.
match goal with
| H : Qeq_bool (dot c x) v = true |- _ => apply Qeq_bool_iff in H
end.
match goal with
| H : Qeq_bool (dot y b + dot w u) v = true |- _ => apply Qeq_bool_iff in H
end.
assert (hA' : Forall (fun r => length r = length c) A).
{ apply Forall_forall; intros r hr; apply Nat.eqb_eq.
  exact (proj1 (forallb_forall _ A) hA r hr). }
assert (hfeas : feasible A b u x).
{ split.
  - match goal with
    | H1 : vleb (repeat 0 _) x = true, H2 : vleb x u = true |- _ =>
      pose proof (Forall_le0 _ _ H1) as h0; pose proof (vlebP _ _ H2) as hxu; clear -h0 hxu
    end.
    induction hxu as [|a ub x u hau _ IH]; constructor.
    + inversion h0; subst; split; assumption.
    + inversion h0; subst; auto.
  - match goal with H : veqb (rows A x) b = true |- _ => exact (veqbP _ _ H) end. }
repeat split; try apply hfeas; try assumption.
intros x' hx'.
match goal with H : dot y b + dot w u == v |- _ => rewrite <- H end.
apply (lp_weak_duality A b c u y w x'); try assumption.
- apply Nat.eqb_eq; assumption.
- apply Nat.eqb_eq; assumption.
- match goal with H : vleb (repeat 0 _) w = true |- _ => exact (Forall_le0 _ _ H) end.
- match goal with H : vleb c _ = true |- _ => exact (vlebP _ _ H) end.
Qed.

Print Assumptions lp_weak_duality.
Print Assumptions lp_optimum.
